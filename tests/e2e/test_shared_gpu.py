"""A shared GPU (docs/shared-gpus.md) on the CPU's stand-ins: the stand-in NVML (tests/fake_nvml) lists other
compute processes, their memory and SM shares, the GPU's utilization and free memory as its environment says, and
the test-only fault stand-in-gpu makes a CPU run watch its GPU 0 as the run's own. The facts reach the report and
the terminal; a floor measured while others computed is a visible skip, never 16, unless --judge-shared-gpu; idle
holders of memory leave it judged; L5's sweep sizes itself from the free memory and says what it kept; where NVML
cannot tell (MIG, a list without this run's process, an old driver) the driver's memory is the fallback."""
import json
import os
import subprocess
import time
import uuid

import unittest

from kd import BIN, BUILD, DiagnosticTest, needs_probe, rendezvous_port, validate

FAKE_NVML = json.load(open(os.environ["KD_BUILD_INFO"]))
MiB = 1 << 20


def stand_in(variant="fake_nvml_full", **facts):
    """The environment of a run with the stand-in NVML first on LD_LIBRARY_PATH and its KD_FAKE_NVML_* facts."""
    env = dict(os.environ, LD_LIBRARY_PATH=FAKE_NVML[variant] + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    for key, value in facts.items():
        env["KD_FAKE_NVML_" + key.upper()] = str(value)
    return env


class HostFacts(DiagnosticTest):
    def test_the_host_check_counts_the_compute_processes(self):
        """--host-check counts every compute process (this run's too: the stand-in lists the supervisor, as a real
        driver lists a worker that holds the GPU); the measuring layers tell them apart."""
        r = self.run_kd("--device", "cpu", "--host-check", env=stand_in(others="2:20480", utilization=97))
        g0, g1 = r.report["host"]["nvml"]["gpus"]
        self.assertEqual((g0["compute_processes"], g0["compute_processes_memory_mib"], g0["utilization_percent"]),
                         (3, 2 * 20480 + 512, 97))
        self.assertEqual((g1["compute_processes"], g1["compute_processes_memory_mib"]), (0, 0))
        self.assertIn("; 3 compute processes (40.50 GiB), utilization 97 %", r.stdout)
        self.assertNotIn(str(os.getpid()), json.dumps(r.report["host"]))  # counted, never named
        self.assertIsNone(r.report["sharing"])  # a CPU run watches no GPU

    def test_a_gpu_run_keeps_the_host_checks_counts(self):
        """A GPU run's worker reads NVML too (host.nvml in every GPU run, for L2 and the signatures) without counting
        processes; the host check's read, which was asked for, stands in the report and on the terminal. Without a
        GPU the run ends at L2, after the worker's read; with one it passes: the facts are the same either way."""
        r = self.run_kd("--host-check", env=stand_in(others="2:20480", utilization=97))
        g0 = r.report["host"]["nvml"]["gpus"][0]
        self.assertEqual((g0["compute_processes"], g0["utilization_percent"]), (3, 97), r.stdout)
        self.assertIn("; 3 compute processes (40.50 GiB), utilization 97 %", r.stdout)

    def test_an_old_driver_leaves_them_unknown(self):
        r = self.run_kd("--device", "cpu", "--host-check", env=stand_in("fake_nvml_minimal", others="2"))
        g0 = r.report["host"]["nvml"]["gpus"][0]
        self.assertEqual((g0["compute_processes"], g0["utilization_percent"]), (None, None))


@needs_probe
class SweepFromFreeMemory(DiagnosticTest):
    """L5's sweep on the CPU under stand-in-gpu: the stand-in GPU's free memory bounds it as a GPU's would."""

    def sweep(self, **facts):
        r = self.run_kd("--device", "cpu", "--layers", "L5,L6", "--range-budget", "4", "--inject-fault", "stand-in-gpu",
                        env=stand_in(**facts))
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        return r, r.report["memory"]["range"], r.report["sharing"]["measurements"]

    def test_with_two_others_it_keeps_their_share_and_says_so(self):
        # Two processes of 71614 MiB each beside this run's 512 MiB leave 31 MiB of the stand-in's 143771 free.
        r, rng, seen = self.sweep(others="2:71614", utilization=97)
        self.assertEqual(rng["device_free_bytes"], 31 * MiB)
        self.assertEqual(rng["memory_note"], "kept 70 % of the free memory (21.7 MiB) for 2 other processes")
        cap = int(0.9 * 31 * MiB / 3)
        self.assertAlmostEqual(rng["memory_cap_bytes"], cap, delta=4096)
        self.assertEqual(rng["stop_reason"], "memory_fraction")  # how far it went and why it stopped: a result
        # On the CPU the cap is a share of the host's available memory, which moves while the sweep runs (here
        # other builds come and go): a point may pass it by what MemAvailable grew. Without the stand-in's sizing
        # the points would go on to a quarter of the host's memory.
        for p in rng["points"]:
            if p["ran"]:
                self.assertLessEqual(p["estimated_bytes"], 1.25 * cap, p)
        self.assertIn("  memory: kept 70 % of the free memory (21.7 MiB) for 2 other processes", r.stdout)
        s = seen["L5.range"]
        self.assertEqual((s["source"], s["contended"], s["floor"], s["fallback_reason"]), ("nvml", True, "none", None))
        self.assertEqual((s["before"]["other_processes"], s["before"]["other_memory_bytes"]), (2, 2 * 71614 * MiB))
        self.assertEqual((s["during"]["other_sm_percent"], s["during"]["utilization_percent"]), (90, 97))
        self.assertGreaterEqual(s["during"]["samples"], 1)  # one right after it, and one every 100 ms it ran
        self.assertEqual(s["others"], "2 other processes (139.87 GiB), up to 90 % of the SMs; GPU utilization up to 97 %")
        self.assertEqual(seen["L6.segments"]["floor"], "none")  # recorded with the segments: they have no floor
        self.assertIn("Other processes on the GPU (NVML):", r.stdout)
        self.assertRegex(r.stdout, r"\n  L5\.range +2 other processes \(139\.87 GiB\), up to 90 % of the SMs; GPU utilization up "
                                   r"to 97 %: used the GPU\n")

    def test_memory_held_by_processes_nvml_does_not_list_counts_too(self):
        # 30 MiB free and nobody listed but this run: a process of another container holds the rest.
        r, rng, seen = self.sweep(free_mib=30)
        s = seen["L5.range"]
        self.assertEqual((s["source"], s["contended"], s["during"]["other_processes"]), ("nvml", True, 0))
        self.assertEqual(s["others"], f"processes NVML does not list ({(143771 - 30 - 512) / 1024:.2f} GiB); GPU utilization up to 0 %")
        self.assertEqual(rng["memory_note"], "kept 55 % of the free memory (16.5 MiB) for other processes")

    def test_alone_it_sweeps_as_before(self):
        r, rng, seen = self.sweep()
        self.assertIsNone(rng["memory_note"])
        self.assertEqual(rng["host_memory_share"], 0.25)  # 0.9 of the stand-in's free 140 GiB is no bound here
        s = seen["L5.range"]
        self.assertEqual((s["source"], s["contended"], s["others"]), ("nvml", False, None))
        self.assertEqual(s["during"]["other_processes"], 0)
        self.assertNotIn("Other processes on the GPU", r.stdout)

    def test_the_watch_ends_with_the_run(self):
        """The NVML watch child lives as long as its worker: nothing of the run is left behind."""
        mark = uuid.uuid4().hex
        r = self.run_kd("--device", "cpu", "--layers", "L5", "--range-budget", "2", "--inject-fault", "stand-in-gpu",
                        env={**stand_in(others="1"), "KD_TEST_MARK": mark})
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["sharing"]["measurements"]["L5.range"]["source"], "nvml")

        def left():
            found = []
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        if f"KD_TEST_MARK={mark}".encode() in f.read():
                            found.append(pid)
                except OSError:
                    pass
            return found
        deadline = time.monotonic() + 2  # the worker's own teardown may outlast the verdict by a moment
        while left() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(left(), [])

    def test_where_nvml_cannot_tell_the_drivers_memory_decides(self):
        for facts, reason in (({"hide_processes": 1}, "NVML lists no process of this run"),
                              ({"mig": 1}, "MIG is on")):
            with self.subTest(**facts):
                r, rng, seen = self.sweep(others="1:30720", **facts)
                s = seen["L5.range"]
                self.assertEqual(s["source"], "driver_memory")
                self.assertIn(reason, s["fallback_reason"])
                self.assertIsNone(s["during"]["other_processes"])  # not counted: only memory says so
                self.assertEqual(s["during"]["other_memory_bytes"], (30720 + 512) * MiB)
                self.assertTrue(s["contended"])
                self.assertEqual(rng["memory_note"],
                                 f"kept 55 % of the free memory ({(143771 - 30720 - 512) * 0.55 / 1024:.2f} GiB) for other processes")
                self.assertIn("Other processes on the GPU (the driver's memory; NVML cannot tell):", r.stdout)


@needs_probe
@unittest.skipUnless(BUILD.collective, "this LibTorch does not export its Gloo process group: L8 cannot run")
class FloorNotJudgedWhileShared(DiagnosticTest):
    """L8's bus-bandwidth floor, which the CPU can measure, with two ranks on the stand-in GPU."""

    def ranks(self, *args, **facts):
        port = rendezvous_port()
        procs = []
        for rank in range(2):
            path = os.path.join(self.dir, f"rank-{rank}-{port}.json")
            env = {**stand_in(**facts), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": "2",
                   "RANK": str(rank), "LOCAL_RANK": str(rank)}
            argv = [BIN, "--device", "cpu", "--layers", "L8", "--min-bus-bandwidth", "100000", "--inject-fault",
                    "stand-in-gpu", "--output", path, *args]
            procs.append((path, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        out = []
        for path, p in procs:
            stdout, stderr = p.communicate(timeout=90)
            report = json.load(open(path)) if os.path.exists(path) else None
            if report:
                validate(report)
            out.append((p.returncode, report, stdout + stderr))
        return out

    def bandwidth_test(self, report):
        l8 = next(l for l in report["layers"] if l["id"] == "L8")
        return next(t for t in l8["tests"] if t["name"] == "Bandwidth")

    def test_others_computing_make_it_a_visible_skip_never_16(self):
        for rc, report, text in self.ranks(others="2:10240", utilization=100):
            self.assertEqual((rc, report["code"]), (0, "SELECTED_TESTS_PASSED"), text)
            t = self.bandwidth_test(report)
            self.assertEqual((t["status"], t["skip_kind"]), ("skipped", "not_applicable"))
            self.assertRegex(t["message"], r"^other processes used the GPU during the measurement: 2 other processes "
                                           r"\(20\.00 GiB\), up to 90 % of the SMs; GPU utilization up to 100 %; all-reduce "
                                           r"bus bandwidth [0-9.]+ GB/s at 16 MiB over 2 ranks, --min-bus-bandwidth 100000 "
                                           r"GB/s; the floor is not applied to a shared GPU \(--judge-shared-gpu applies it\)$")
            self.assertFalse(report["collective"]["bandwidth"]["floor_checked"])
            self.assertGreater(report["collective"]["bandwidth"]["sizes"][-1]["busbw"], 0)  # the figure is recorded
            s = report["sharing"]["measurements"]["L8.bandwidth"]
            self.assertEqual((s["floor"], s["contended"], s["during"]["other_processes"]), ("not_applied", True, 2))
            self.assertGreaterEqual(s["during"]["samples"], 5)  # three sizes of half a second: a look every 100 ms
            self.assertIn("used the GPU, the floor not applied", text)

    def test_the_option_applies_the_floor_anyway(self):
        for rc, report, text in self.ranks("--judge-shared-gpu", others="2:10240"):
            self.assertEqual((rc, report["code"], report["stage"]), (16, "PERFORMANCE_BELOW_FLOOR", "L8.bandwidth"), text)
            self.assertIn("; other processes used the GPU during the measurement: 2 other processes", report["error"]["message"])
            self.assertEqual(report["requested"]["judge_shared_gpu"], True)
            self.assertEqual(report["sharing"]["measurements"]["L8.bandwidth"]["floor"], "applied")

    def test_alone_or_beside_idle_holders_it_is_judged_as_always(self):
        for facts in ({}, {"others": "1:10240", "others_sm": 0}):
            with self.subTest(**facts):
                for rc, report, text in self.ranks(**facts):
                    self.assertEqual((rc, report["code"]), (16, "PERFORMANCE_BELOW_FLOOR"), text)
                    self.assertNotIn("other processes", report["error"]["message"])
                    s = report["sharing"]["measurements"]["L8.bandwidth"]
                    self.assertEqual((s["floor"], s["contended"]), ("applied", False))


if __name__ == "__main__":
    unittest.main()
