"""--host-check with stand-in nvidia-smi programs on PATH and a stand-in NVML (tests/fake_nvml) first on
LD_LIBRARY_PATH: it informs, never decides, and never waits > 3 s."""
import json
import os
import stat
import subprocess
import unittest

from kd import DiagnosticTest, HAVE_PROBE

FAKE_NVML = json.load(open(os.environ["KD_BUILD_INFO"]))

NORMAL = 'echo "580.159.04, 143771"; echo "580.159.04, 143771"'


class HostCheck(DiagnosticTest):
    def path_with(self, script):
        """A folder first on PATH whose nvidia-smi runs `script`."""
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        smi = os.path.join(bin_dir, "nvidia-smi")
        with open(smi, "w") as f:
            f.write("#!/bin/sh\n" + script + "\n")
        os.chmod(smi, stat.S_IRWXU)
        return dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))

    def run_cpu(self, env=None, host_check=True):
        args = ["--device", "cpu"] + (["--host-check"] if host_check else [])
        return self.run_kd(*args, env=env)

    def expected(self):
        return ("CPU_CHECK_PASSED", 0) if HAVE_PROBE else ("TORCH_MISSING", 3)

    def test_two_gpus(self):
        r = self.run_cpu(self.path_with(NORMAL))
        self.assertVerdict(r, *self.expected())
        host = r.report["host"]
        self.assertEqual(host["status"], "ok")
        self.assertEqual(host["gpus"], [{"driver_version": "580.159.04", "memory_total_mib": 143771}] * 2)
        self.assertIn("not an equivalent check for ROCm", host["note"])
        self.assertIn("Host (nvidia-smi): 2 GPUs", r.stdout)

    def test_not_asked_means_no_nvidia_smi_part(self):
        # Since 1.9 host always holds the machine around the GPU (test_machine.py); nvidia-smi only when asked.
        r = self.run_cpu(self.path_with(NORMAL), host_check=False)
        for key in ("tool", "status", "gpus", "message", "duration_ms", "note", "nvml"):
            self.assertNotIn(key, r.report["host"])
        self.assertNotIn("Host (nvidia-smi)", r.stdout)

    def test_absent(self):
        env = dict(os.environ, PATH=os.path.join(self.dir, "empty"))
        r = self.run_cpu(env)
        self.assertVerdict(r, *self.expected())
        self.assertEqual(r.report["host"]["status"], "absent")

    def test_sleeper_is_stopped_at_three_seconds(self):
        baseline = self.run_cpu(host_check=False).seconds
        r = self.run_cpu(self.path_with("sleep 10"))
        self.assertVerdict(r, *self.expected())
        self.assertEqual(r.report["host"]["status"], "timed_out")
        self.assertLessEqual(r.seconds, baseline + 3.5)

    def test_failing_tool(self):
        r = self.run_cpu(self.path_with('echo "NVIDIA-SMI has failed because it couldn\'t communicate with the driver"; exit 9'))
        self.assertVerdict(r, *self.expected())
        self.assertEqual(r.report["host"]["status"], "failed")
        self.assertIn("NVIDIA-SMI has failed", r.report["host"]["message"])

    def test_garbage_output(self):
        r = self.run_cpu(self.path_with("echo '<?xml version=\"1.0\"?><nvidia_smi_log/>'"))
        self.assertVerdict(r, *self.expected())
        self.assertEqual(r.report["host"]["status"], "failed")
        self.assertEqual(r.report["host"]["gpus"], [])



def system_has_nvml():
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    return "libnvidia-ml.so.1" in out


class NvmlFacts(HostCheck):
    """The NVML facts of every GPU in host.nvml, from a stand-in libnvidia-ml.so.1 with two H200s; GPU 1 shows
    KD_FAKE_NVML's scenario, GPU 0 stays healthy. A CPU run: the verdict is never changed, and the L2 health
    test does not query GPU state (not applicable)."""

    def run_nvml(self, scenario, variant="fake_nvml_full", **extra):
        env = self.path_with(NORMAL)
        env["LD_LIBRARY_PATH"] = FAKE_NVML[variant] + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        env["KD_FAKE_NVML"] = scenario
        env.update(extra)
        r = self.run_cpu(env)
        self.assertVerdict(r, *self.expected())
        return r, r.report["host"]["nvml"]

    def assertHealthTestNotApplicable(self, r):
        if not HAVE_PROBE:
            return
        l2 = next(l for l in r.report["layers"] if l["id"] == "L2")
        health = next(t for t in l2["tests"] if t["name"] == "Health")
        self.assertEqual(health["status"], "skipped")  # not applicable, shown as a skip
        self.assertIn("CPU mode does not query GPU state", health["message"])

    def test_healthy(self):
        r, nvml = self.run_nvml("healthy")
        self.assertEqual(nvml["status"], "ok")
        self.assertEqual((nvml["driver_version"], nvml["cuda_driver_version"]), ("580.159.04", "13.0"))
        self.assertEqual([g["pci_bus_id"] for g in nvml["gpus"]], ["00000000:19:00.0", "00000000:3B:00.0"])
        g = nvml["gpus"][1]
        self.assertEqual(g["name"], "NVIDIA H200")
        self.assertEqual((g["memory_total_mib"], g["memory_used_mib"]), (143771, 512))
        self.assertEqual((g["ecc_mode"], g["ecc_volatile_corrected"], g["ecc_volatile_uncorrected"]), ("enabled", 0, 0))
        self.assertEqual((g["retired_pages_pending"], g["row_remap_pending"], g["row_remap_failed"]), (False, False, False))
        # Idle: link generation 1 of 5 and 345 MHz are power saving, no warning.
        self.assertEqual((g["pcie_gen"], g["pcie_gen_max"], g["pcie_width"], g["pcie_width_max"]), (1, 5, 16, 16))
        self.assertEqual((g["sm_clock_mhz"], g["sm_clock_max_mhz"], g["mem_clock_mhz"], g["mem_clock_max_mhz"]),
                         (345, 1980, 2619, 2619))
        self.assertEqual(g["clock_event_reasons"], ["gpu_idle"])
        self.assertEqual((g["temperature_c"], g["power_draw_w"], g["power_limit_w"]), (32, 75.5, 700))
        self.assertEqual((g["persistence_mode"], g["compute_mode"], g["mig_mode"]), ("enabled", "default", "disabled"))
        self.assertEqual((g["problems"], g["warnings"]), ([], []))
        self.assertNotIn("uuid", json.dumps(nvml).lower())
        self.assertIn("Host (NVML): driver 580.159.04, CUDA 13.0", r.stdout)
        self.assertIn("GPU 1 NVIDIA H200 00000000:3B:00.0: healthy;", r.stdout)
        self.assertHealthTestNotApplicable(r)

    def test_ecc_errors(self):
        r, nvml = self.run_nvml("ecc")
        g0, g1 = nvml["gpus"]
        self.assertEqual((g1["ecc_volatile_corrected"], g1["ecc_volatile_uncorrected"]), (12, 3))
        self.assertEqual(g1["problems"], ["3 uncorrected ECC errors since the driver was loaded"])
        self.assertEqual(g0["problems"], [])
        self.assertIn("GPU 1 NVIDIA H200 00000000:3B:00.0: UNHEALTHY;", r.stdout)
        self.assertIn("problem: 3 uncorrected ECC errors", r.stdout)

    def test_remap_failure(self):
        r, nvml = self.run_nvml("remap_failed")
        g = nvml["gpus"][1]
        self.assertEqual((g["row_remap_failed"], g["row_remap_pending"]), (True, False))
        self.assertEqual(len(g["problems"]), 1)
        self.assertIn("row remapping failed", g["problems"][0])

    def test_slowdown_and_x4_link(self):
        r, nvml = self.run_nvml("slow")
        g = nvml["gpus"][1]
        self.assertEqual((g["pcie_width"], g["pcie_width_max"], g["sm_clock_mhz"]), (4, 16, 600))
        self.assertEqual(g["clock_event_reasons"], ["hw_slowdown", "sw_thermal_slowdown"])
        self.assertEqual(g["problems"], [])
        self.assertEqual(g["warnings"], ["PCIe link trained at x4 of x16", "clocks held down by hw_slowdown, sw_thermal_slowdown",
                                         "SM clock 600 MHz of its maximum 1980 MHz"])
        self.assertIn("warning: PCIe link trained at x4 of x16", r.stdout)

    def test_nvlink_c2c(self):
        """NVML's NVLink-C2C fields: the active links and their bandwidth together (an inactive one left out); a GPU
        whose NVML lists no C2C link has null, as the healthy scenario's do."""
        _, nvml = self.run_nvml("healthy")
        self.assertEqual([(g["c2c_links"], g["c2c_gb_s"]) for g in nvml["gpus"]], [(None, None)] * 2)
        _, nvml = self.run_nvml("healthy", KD_FAKE_NVML_C2C="10:45000")
        self.assertEqual([(g["c2c_links"], g["c2c_gb_s"]) for g in nvml["gpus"]], [(10, 450.0)] * 2)

    def test_missing_symbols(self):
        """An old driver: what it lacks is null (not reported), never an error."""
        r, nvml = self.run_nvml("healthy", "fake_nvml_minimal")
        self.assertEqual(nvml["status"], "ok")
        self.assertEqual(nvml["driver_version"], "580.159.04")
        self.assertIsNone(nvml["cuda_driver_version"])
        g = nvml["gpus"][0]
        self.assertEqual((g["name"], g["pci_bus_id"]), ("NVIDIA H200", "00000000:19:00.0"))
        for key in ("memory_total_mib", "ecc_mode", "ecc_volatile_uncorrected", "row_remap_failed", "pcie_width",
                    "clock_event_reasons", "temperature_c", "power_draw_w", "mig_mode"):
            self.assertIsNone(g[key], key)
        self.assertEqual((g["problems"], g["warnings"]), ([], []))
        self.assertIn("ECC ? uncorr ?", r.stdout)

    def test_hung_init_is_stopped_at_three_seconds(self):
        baseline = self.run_cpu(host_check=False).seconds
        r, nvml = self.run_nvml("hang")
        self.assertEqual(nvml["status"], "timed_out")
        self.assertEqual(nvml["gpus"], [])
        self.assertLess(nvml["duration_ms"], 3500)
        self.assertLessEqual(r.seconds, baseline + 3.5)
        self.assertEqual(r.report["host"]["status"], "ok")  # nvidia-smi answered meanwhile
        self.assertIn("Host (NVML): timed_out: NVML did not answer within 3 s", r.stdout)
        self.assertHealthTestNotApplicable(r)

    def test_absent(self):
        if system_has_nvml():
            self.skipTest("this machine has a real libnvidia-ml.so.1: NVML cannot be made absent here")
        env = dict(self.path_with(NORMAL), LD_LIBRARY_PATH=os.path.join(self.dir, "empty"))
        r = self.run_cpu(env)
        self.assertVerdict(r, *self.expected())
        self.assertEqual(r.report["host"]["nvml"]["status"], "absent")
        self.assertEqual(r.report["host"]["nvml"]["gpus"], [])
        self.assertIn("Host (NVML): not installed", r.stdout)


if __name__ == "__main__":
    unittest.main()
