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
        # The fault was injected (test only): said beside the code, and on the whole run.
        self.assertEqual(props.get("injected_fault"), "wrong-product")
        self.assertEqual(ET.parse(xml).getroot().get("injected_fault"), "wrong-product")

    @needs_probe
    def test_gtest_json_marks_an_injected_fault_beside_the_code(self):
        path = os.path.join(self.dir, "out.json")
        r = self.run_kd("--device", "cpu", "--inject-fault", "runtime-error", f"--gtest_output=json:{path}")
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L3.product")
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual(doc.get("injected_fault"), "runtime-error")
        failed = [t for s in doc["testsuites"] for t in s["testsuite"] if t.get("failures")]
        self.assertEqual([(t["code"], t.get("injected_fault")) for t in failed], [("RUNTIME_ERROR", "runtime-error")])

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
        self.assertNotIn("injected_fault", failed[0])  # a real failure is never marked

    def test_a_machine_without_a_driver_gets_the_hint(self):
        code, exit_code = expected_default_code()
        r = self.run_kd()
        self.assertVerdict(r, code, exit_code)
        if code != "GPU_UNAVAILABLE" or "Found no NVIDIA driver" not in r.report["error"]["message"]:
            self.skipTest("this machine has an NVIDIA driver")  # visible, not a pass
        # Which signature, the machine's own facts say (docs/signatures.md): a container without /dev/nvidia* nodes,
        # a kernel driver without its library, or no driver at all.
        host = r.report["host"]
        if host["container"]["detected"] and not host["nvidia"]["device_nodes"]:
            want, words, action = "container-without-gpus", "started without its GPUs", "--gpus all"
        elif host["nvidia"]["kernel_driver_version"]:
            want, words, action = "libcuda-not-found", "libcuda.so.1 is not found", "user-space libraries"
        else:
            want, words, action = "no-driver", "no NVIDIA driver is loaded", "install the NVIDIA driver"
        self.assertEqual(r.report["error"]["signature"], want)
        self.assertIn(words, r.report["error"]["cause"])
        self.assertIn(action, r.report["next_action"])  # the specific one replaces the code's own
        self.assertEqual(r.report["error"]["next_action"], r.report["next_action"])
        self.assertIn(f"[{want}]", r.stdout)


class SkipKinds(DiagnosticTest):
    """A check that cannot apply here and one that an earlier failure kept from running are told apart."""

    def test_with_every_gpu_hidden_what_needs_the_failed_step_is_blocked_by_it(self):
        r = self.run_kd(env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))  # a failure on every build (3, 5 or 6)
        self.assertEqual(r.report["status"], "failed", r.stdout)
        failure = {"stage": r.report["stage"], "code": r.report["code"]}
        layers = {l["id"]: l for l in r.report["layers"]}
        tests = {f"{l['id']}.{t['name']}": t for l in r.report["layers"] for t in l["tests"]}
        self.assertEqual([t["code"] for t in tests.values() if t["status"] == "failed"], [failure["code"]])
        for name, t in tests.items():
            if t["status"] == "skipped" and t["skip_kind"] == "blocked":
                self.assertEqual(t["blocked_by"], failure, name)
        self.assertEqual(tests["L1.PythonTorch"]["skip_kind"], "not_applicable")  # no --python: nothing failed there
        self.assertEqual({t["skip_kind"] for t in layers["L3"]["tests"]}, {"blocked"})
        self.assertEqual((layers["L3"]["status"], layers["L3"]["skip_kind"]), ("skipped", "blocked"))
        self.assertEqual(layers["L3"]["blocked_by"], failure)
        self.assertTrue(r.layer_line("L3").endswith(f"  blocked: {failure['stage']} failed ({failure['code']})"),
                        r.layer_line("L3"))


if __name__ == "__main__":
    unittest.main()
