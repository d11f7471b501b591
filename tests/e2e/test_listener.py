"""The verdict listener, driven by real GoogleTest events from a program of synthetic tests."""
import json
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

from kd import BUILD

CASES = BUILD.listener_cases


def run(*args, env=None):
    proc = subprocess.run([CASES, *args], capture_output=True, text=True, timeout=60, env=env)
    events = [json.loads(l[6:]) for l in proc.stdout.splitlines() if l.startswith("EVENT ")]
    end = [e for e in events if e["ev"] == "end"][-1]
    return proc, events, end


class Listener(unittest.TestCase):
    def test_all_pass(self):
        _, _, end = run("--gtest_filter=Pass.*")
        self.assertEqual((end["ran"], end["failed"], end["failure"]), (2, 0, None))

    def test_first_failure_decides(self):
        _, _, end = run("--gtest_filter=Pass.*:Fail.WithCode:Fail.SecondWithCode")
        self.assertEqual(end["failure"]["code"], "CHECK_FAILED")
        self.assertEqual(end["failure"]["stage"], "L3.product")
        self.assertEqual(end["failure"]["message"], "a @ b = [[3,3],[7,7]]")
        self.assertEqual(end["failed"], 2)

    def test_skip_is_a_skip_not_a_pass(self):
        proc, events, end = run("--gtest_filter=Skip.*")
        skipped = [e for e in events if e["ev"] == "test_end"][0]
        self.assertEqual(skipped["status"], "skipped")
        self.assertEqual(skipped["message"], "not supported here")
        self.assertEqual(end["skipped"], 1)
        self.assertIn("[  SKIPPED ] Skip.Plain", proc.stdout)  # what ctest's skip detection reads

    def test_a_skip_says_its_kind_and_a_blocked_one_what_blocked_it(self):
        _, events, end = run("--gtest_filter=Skip.*:SkipKind.*")
        kinds = {e["test"]: (e["skip_kind"], e.get("blocked_by")) for e in events if e["ev"] == "test_end"}
        self.assertEqual(kinds, {
            "Plain": ("not_applicable", None),  # a plain GTEST_SKIP: the test saying it does not apply
            "NotApplicable": ("not_applicable", None),
            "Blocked": ("blocked", {"stage": "L2.gpu_available", "code": "GPU_UNAVAILABLE"})})
        self.assertEqual((end["skipped"], end["failed"], end["failure"]), (3, 0, None))  # never a pass, no failure

    def test_googletests_own_skips_after_a_failure_are_blocked_by_it(self):
        _, events, _ = run("--gtest_filter=Fail.WithCode:Fail.SecondWithCode:LaterSkip.*", "--gtest_fail_fast")
        ends = {e["test"]: e for e in events if e["ev"] == "test_end"}
        self.assertEqual(ends["WithCode"]["status"], "failed")
        for name in ("SecondWithCode", "Plain"):  # skipped by --gtest_fail_fast before they ran: blocked
            self.assertEqual((ends[name]["status"], ends[name]["skip_kind"]), ("skipped", "blocked"), name)
            self.assertEqual(ends[name]["blocked_by"], {"stage": "L3.product", "code": "CHECK_FAILED"})
        _, events, _ = run("--gtest_filter=SetupFails.*")
        body = [e for e in events if e["ev"] == "test_end"][0]
        self.assertEqual((body["status"], body["skip_kind"]), ("skipped", "blocked"))
        self.assertEqual(body["blocked_by"], {"stage": "L2.gpu_available", "code": "GPU_UNAVAILABLE"})

    def test_a_tests_own_skip_after_a_failure_is_still_not_applicable(self):
        _, events, end = run("--gtest_filter=Fail.WithCode:LaterSkip.*")
        later = [e for e in events if e["ev"] == "test_end" and e["suite"] == "LaterSkip"][0]
        self.assertEqual((later["skip_kind"], later["message"]), ("not_applicable", "not supported here either"))
        self.assertNotIn("blocked_by", later)
        self.assertEqual(end["failure"]["code"], "CHECK_FAILED")

    def test_failure_without_code_is_a_runtime_error_at_the_test(self):
        _, _, end = run("--gtest_filter=Fail.WithoutCode")
        self.assertEqual(end["failure"]["code"], "RUNTIME_ERROR")
        self.assertEqual(end["failure"]["stage"], "Fail.WithoutCode")

    def test_exception_is_a_failure(self):
        _, _, end = run("--gtest_filter=Fail.Throws")
        self.assertEqual(end["failure"]["code"], "RUNTIME_ERROR")

    def test_suite_setup_failure_counts_first(self):
        _, _, end = run("--gtest_filter=SetupFails.*")
        self.assertEqual(end["failure"]["code"], "GPU_UNAVAILABLE")
        self.assertEqual(end["failure"]["stage"], "L2.gpu_available")

    def test_an_injected_fault_is_a_property_of_the_run_and_of_each_failing_test(self):
        with tempfile.TemporaryDirectory() as folder:
            xml = os.path.join(folder, "out.xml")
            run("--gtest_filter=Pass.One:Fail.WithCode:Skip.Plain", f"--gtest_output=xml:{xml}",
                env={**os.environ, "KD_LISTENER_INJECTED_FAULT": "wrong-product"})
            root = ET.parse(xml).getroot()
        self.assertEqual(root.get("injected_fault"), "wrong-product")
        marked = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")} for c in root.iter("testcase")}
        self.assertEqual(marked["WithCode"], {"code": "CHECK_FAILED", "stage": "L3.product", "injected_fault": "wrong-product"})
        self.assertNotIn("injected_fault", marked["One"])  # only the failure it caused, beside its code
        self.assertNotIn("injected_fault", marked["Plain"])

    def test_fail_fast_keeps_the_first_failure(self):
        _, events, end = run("--gtest_filter=Fail.WithCode:Fail.SecondWithCode:Pass.*", "--gtest_fail_fast")
        self.assertEqual(end["failure"]["code"], "CHECK_FAILED")
        statuses = [e["status"] for e in events if e["ev"] == "test_end"]
        self.assertIn("skipped", statuses)  # later tests arrive as skips, not passes


if __name__ == "__main__":
    unittest.main()
