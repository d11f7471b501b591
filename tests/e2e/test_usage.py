"""Help, test listing, and selections that check nothing (exit 2). Bad options and values: scenarios.py."""
import subprocess
import unittest

from kd import BIN, DiagnosticTest, needs_probe


class Usage(DiagnosticTest):
    # Bad values of every option are rows of the fault matrix (scenarios.py, USAGE).

    def test_help(self):
        proc = subprocess.run([BIN, "--help"], capture_output=True, text=True, timeout=30)
        self.assertEqual(proc.returncode, 0)
        for option in ("--device", "--device-index", "--timeout", "--output", "--layers"):
            self.assertIn(option, proc.stdout)

    def test_list_tests_in_layer_order(self):
        proc = subprocess.run([BIN, "--gtest_list_tests"], capture_output=True, text=True, timeout=30)
        self.assertEqual(proc.returncode, 0)
        suites = [l.rstrip(".") for l in proc.stdout.splitlines() if l and not l.startswith(" ")]
        self.assertEqual(suites, ["L1_RuntimeImport", "L2_BackendDevice", "L3_TinyOp"])

    @needs_probe
    def test_selection_that_only_skips_checked_nothing(self):
        r = self.run_kd("--device", "cpu", "--gtest_filter=L2_BackendDevice.GpuAvailable")
        self.assertEqual(r.rc, 2, r.stdout[-2000:])
        self.assertIsNone(r.report)  # nothing was checked: no report says anything (issue 17)
        self.assertIn("Verdict: USAGE_ERROR (exit 2)", r.stdout)
        self.assertIn("skipped", r.stdout)

    def test_filter_matching_nothing_is_a_usage_error(self):
        r = self.run_kd("--gtest_filter=NoSuch.*")
        self.assertEqual(r.rc, 2)
        self.assertIsNone(r.report)
        self.assertIn("Verdict: USAGE_ERROR (exit 2)", r.stdout)


if __name__ == "__main__":
    unittest.main()
