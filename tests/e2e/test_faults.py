"""Test-only fault injection: each fault gives its code, on time, with the right stage."""
import os
import signal
import subprocess
import time
import unittest

import json

from kd import BIN, DiagnosticTest, needs_probe, read, validate


@needs_probe
class Faults(DiagnosticTest):
    def test_wrong_product_is_check_failed(self):
        r = self.run_kd("--device", "cpu", "--inject-fault", "wrong-product")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L3.product")
        self.assertIn("[[3,3],[7,7]]", r.report["error"]["message"])
        self.assertFalse(r.report["execution"]["product_verified"])
        self.assertEqual(r.report["requested"]["fault_injection"], "wrong-product")
        self.assertTrue(any("fault injection" in w for w in r.report["warnings"]))

    def test_out_of_memory(self):
        r = self.run_kd("--device", "cpu", "--inject-fault", "oom")
        self.assertVerdict(r, "OUT_OF_MEMORY", 9, "L3.product")

    def test_runtime_error(self):
        r = self.run_kd("--device", "cpu", "--inject-fault", "runtime-error")
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L3.product")
        self.assertNotIn("frame #", r.report["error"]["message"])  # no raw backtrace

    def test_hang_ends_on_time_with_timeout(self):
        r = self.run_kd("--device", "cpu", "--inject-fault", "hang", "--timeout", "5")
        self.assertVerdict(r, "TIMEOUT", 10, "L3.synchronize")
        self.assertLess(r.seconds, 6.0)
        self.assertIn("last finished step: load_library", r.report["error"]["message"])

    def test_worker_abort_is_worker_failed(self):
        r = self.run_kd("--device", "cpu", "--inject-fault", "abort")
        self.assertVerdict(r, "WORKER_FAILED", 11, "L3.product")
        self.assertIn("SIGABRT", r.report["error"]["message"])
        self.assertIn("last finished step: load_library", r.report["error"]["message"])

    def test_worker_killed_from_outside_is_worker_failed(self):
        path = os.path.join(self.dir, "killed.json")
        sup = subprocess.Popen([BIN, "--device", "cpu", "--inject-fault", "hang", "--timeout", "60", "--output", path],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        worker = self._wait_for_child(sup.pid)
        os.kill(worker, signal.SIGKILL)
        out, _ = sup.communicate(timeout=30)
        self.assertEqual(sup.returncode, 11, out[-2000:])
        report = json.loads(read(path))
        validate(report)
        self.assertEqual(report["code"], "WORKER_FAILED")
        self.assertIn("SIGKILL", report["error"]["message"])

    def _wait_for_child(self, pid):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                kids = read(f"/proc/{pid}/task/{pid}/children").split()
            except FileNotFoundError:
                kids = []
            # Kill once the worker is in its hang: after it has started running tests.
            if kids and time.monotonic() > deadline - 18:
                return int(kids[0])
            time.sleep(0.1)
        self.fail("the worker never started")


if __name__ == "__main__":
    unittest.main()
