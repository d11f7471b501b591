"""A layer alone gives the default run's code; gtest's own XML carries the failing test's code."""
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


if __name__ == "__main__":
    unittest.main()
