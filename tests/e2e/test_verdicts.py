"""A layer alone gives the default run's code; gtest's own XML carries the failing test's code."""
import json
import os
import unittest
import xml.etree.ElementTree as ET

from kd import DiagnosticTest, expected_default_code, needs_probe


class DefaultRun(DiagnosticTest):
    # The default run's code on each kind of build and machine: rows of scenarios.py (0, 3, 5, 6).

    def test_l3_filter_alone_gives_the_same_code(self):
        code, exit_code = expected_default_code()
        r = self.run_kd("--gtest_filter=L3_TinyOp.*")
        self.assertVerdict(r, code, exit_code)
        self.assertEqual([l["status"] for l in r.report["layers"][:2]], ["not_run", "not_run"])

    @needs_probe
    def test_gtest_xml_carries_the_code_of_the_failing_test(self):
        xml = os.path.join(self.dir, "out.xml")
        r = self.run_kd("--device", "cpu", "--inject-fault", "wrong-product", f"--gtest_output=xml:{xml}")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L3.product")
        case = ET.parse(xml).getroot().find(".//testcase[@name='Product']")
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        self.assertEqual(props.get("code"), "CHECK_FAILED")
        self.assertEqual(props.get("stage"), "L3.product")

    def test_gtest_json_carries_the_code_of_the_failing_test(self):
        code, exit_code = expected_default_code()
        if exit_code == 0:
            self.skipTest("this machine passes: no failing test to carry a code")  # visible, not a pass
        path = os.path.join(self.dir, "out.json")
        r = self.run_kd(f"--gtest_output=json:{path}")
        self.assertVerdict(r, code, exit_code)
        with open(path) as f:
            cases = [t for s in json.load(f)["testsuites"] for t in s["testsuite"]]
        failed = [t for t in cases if t.get("failures")]
        self.assertEqual(len(failed), 1, failed)
        self.assertEqual(failed[0].get("code"), code)
        self.assertEqual(failed[0].get("stage"), r.report["stage"])

    def test_a_machine_without_a_driver_gets_the_hint(self):
        code, exit_code = expected_default_code()
        r = self.run_kd()
        self.assertVerdict(r, code, exit_code)
        if code != "GPU_UNAVAILABLE" or "Found no NVIDIA driver" not in r.report["error"]["message"]:
            self.skipTest("this machine has an NVIDIA driver")  # visible, not a pass
        self.assertIn("no NVIDIA driver is visible", r.report["error"]["cause"])
        self.assertIn("--gpus all", r.report["next_action"])  # the specific one replaces the code's own
        self.assertEqual(r.report["error"]["next_action"], r.report["next_action"])
        self.assertIn("next:  install the NVIDIA driver", r.stdout)


if __name__ == "__main__":
    unittest.main()
