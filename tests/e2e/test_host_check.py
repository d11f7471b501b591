"""--host-check with stand-in nvidia-smi programs on PATH: it informs, never decides, and never waits > 3 s."""
import os
import stat
import unittest

from kd import DiagnosticTest, HAVE_PROBE

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

    def test_not_asked_means_null(self):
        r = self.run_cpu(self.path_with(NORMAL), host_check=False)
        self.assertIsNone(r.report["host"])

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


if __name__ == "__main__":
    unittest.main()
