"""The codes a real machine gives: the default GPU run, a layer alone, LibTorch missing or broken."""
import json
import os
import shutil
import unittest
import xml.etree.ElementTree as ET

from kd import BIN, DiagnosticTest, expected_default_code, needs_probe


class DefaultRun(DiagnosticTest):
    def test_default_run_gives_the_true_code(self):
        code, exit_code = expected_default_code()
        r = self.run_kd()
        self.assertVerdict(r, code, exit_code)
        if code == "GPU_UNAVAILABLE":
            self.assertEqual(r.report["stage"], "L2.gpu_available")
            self.assertFalse(r.report["pytorch"]["gpu_available"])
            self.assertEqual(r.report["pytorch"]["visible_device_count"], 0)
            self.assertEqual(r.report["pytorch"]["backend"], "cuda")
            self.assertTrue(r.report["error"]["message"])
            self.assertEqual(r.report["next_action"], "check device visibility, driver, permissions")
            self.assertIsNone(r.report["execution"]["device"])  # nothing ran on any device
            if "Found no NVIDIA driver" in r.report["error"]["message"]:  # this machine: no driver at all
                self.assertIn("no NVIDIA driver is visible", r.report["error"]["cause"])
                self.assertIn("--gpus all", r.report["error"]["next_action"])
                self.assertIn("next:  install the NVIDIA driver", r.stdout)

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


class LibTorchLoading(DiagnosticTest):
    def test_probe_absent_is_torch_missing(self):
        lonely = os.path.join(self.dir, "kernodeck-diagnostic")
        shutil.copy(BIN, lonely)  # the executable without libkd_probe.so beside it
        r = self.run_kd("--device", "cpu", binary=lonely)
        self.assertVerdict(r, "TORCH_MISSING", 3, "L1.import")
        self.assertFalse(r.report["pytorch"]["loaded"])
        self.assertIn("<path>/libkd_probe.so", r.report["error"]["message"])
        self.assertNotIn(self.dir, r.report["error"]["message"])

    @needs_probe
    def test_corrupt_libc10_first_on_the_library_path_is_import_failed(self):
        libs = os.path.join(self.dir, "libs")
        os.mkdir(libs)
        open(os.path.join(libs, "libc10.so"), "wb").close()  # "file too short"
        env = dict(os.environ, LD_LIBRARY_PATH=libs)
        r = self.run_kd("--device", "cpu", env=env)
        self.assertVerdict(r, "TORCH_IMPORT_FAILED", 4, "L1.import")
        self.assertIn("libc10.so", r.report["error"]["message"])
        self.assertNotIn(libs, r.report["error"]["message"])


if __name__ == "__main__":
    unittest.main()
