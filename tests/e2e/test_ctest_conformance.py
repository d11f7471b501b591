"""`ctest -L conformance`: one CTest test per layer, the real binary, chained by fixtures;
JUnit that names the failing layer's code and stage and validates against schema/junit.xsd."""
import json
import os
import re
import subprocess
import unittest

from ctest_run import BUILD, CTEST, JUNIT_XSD, SOURCE, XMLLINT, CTestCase, cmake_string
from kd import BIN, BUILD as THIS_BUILD, copy_alone, expected_default_code, needs_probe

LAYER_OF_CODE = {"TORCH_MISSING": "L1", "TORCH_IMPORT_FAILED": "L1", "SUITE_INCOMPLETE": "L1", "GPU_BACKEND_ABSENT": "L2",
                 "GPU_UNAVAILABLE": "L2", "DEVICE_INDEX_INVALID": "L2"}


def binary_layers():
    """The layers the diagnostic lists itself: the conformance tests must follow them, except L7 (the peer
    layer spans every GPU at once, which CTest's one GPU per test cannot give; --device-index all runs it)
    and L8 (it spans the ranks of a job, not one machine)."""
    out = subprocess.run([BIN, "--gtest_list_tests", "--gtest_filter=*"], capture_output=True, text=True).stdout
    listed = {m for m in re.findall(r"^(L\d+)_\w*\.$", out, re.M)} - {"L7", "L8"}
    return sorted(listed, key=lambda l: int(l[1:]))


class ConformanceChain(CTestCase):
    def test_default_chain_stops_at_the_first_failing_layer(self):
        code, exit_code = expected_default_code()
        layers = binary_layers()
        self.assertEqual(layers[:3], ["L1", "L2", "L3"])
        run = self.ctest(self.build_conformance_dir())
        names = [f"conformance.{l}" for l in layers]
        self.assertEqual(sorted(run.cases), sorted(names), run.out)
        failing = LAYER_OF_CODE.get(code)
        if failing is None:  # a machine where the check passes: every layer passes
            self.assertEqual(exit_code, 0)
            self.assertEqual(run.rc, 0, run.out)
            self.assertEqual({run.status(n) for n in names}, {"run"}, run.out)
            return
        self.assertNotEqual(run.rc, 0, run.out)
        at = layers.index(failing)
        for name in names[:at]:
            self.assertEqual(run.status(name), "run", run.output(name))
            self.assertIn("Verdict: SELECTED_TESTS_PASSED (exit 0)", run.output(name))
        failed = names[at]
        self.assertEqual(run.status(failed), "fail", run.out)
        self.assertIsNotNone(run.cases[failed].find("failure"))
        verdict = re.search(rf"^Verdict: {code} \(exit {exit_code}\) at stage ({failing}\.\w+)$",
                            run.output(failed), re.M)
        self.assertIsNotNone(verdict, run.output(failed))  # the code and the stage, in the JUnit file
        if code == "GPU_UNAVAILABLE":
            self.assertEqual(verdict.group(1), "L2.gpu_available")
        # What GitLab and GitHub show as the reason: CTest's failure message names the code and the stage.
        message = run.cases[failed].find("failure").get("message")
        self.assertIn(f"{code} at {verdict.group(1)}", message)
        self.assertRegex(run.out, rf"\d+ - {re.escape(failed)} \(Failed\)")
        for name in names[at + 1:]:
            self.assertEqual(run.status(name), "notrun", run.out)
            self.assertIsNotNone(run.cases[name].find("skipped"))
            self.assertRegex(run.out, rf"\d+ - {re.escape(name)} \(Not Run\)")

    @needs_probe
    def test_cpu_chain_passes_end_to_end(self):
        run = self.ctest(self.settings_dir("cpu", KD_CONFORMANCE_DEVICE="cpu"))
        self.assertEqual(run.rc, 0, run.out)
        names = [f"conformance.{l}" for l in binary_layers()]
        self.assertEqual(sorted(run.cases), sorted(names), run.out)
        for name in names:
            self.assertEqual(run.status(name), "run", run.out)
        self.assertIn("Verdict: CPU_CHECK_PASSED (exit 0)", run.output("conformance.L3"))
        self.assertIn("product and gradient verified on cpu, loss 196", run.output("conformance.L3"))

    @needs_probe
    def test_an_injected_fault_is_marked_in_junit(self):
        # A diagnostic that injects a test-only fault (as a KD_CONFORMANCE_BIN wrapper would): L3 fails, and CTest's
        # JUnit message says the failure was injected; the layers the fault never reached pass, marked in their output.
        wrapper = os.path.join(self.dir, "injecting-diagnostic")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec "{BIN}" --inject-fault wrong-product "$@"\n')
        os.chmod(wrapper, 0o755)
        run = self.ctest(self.settings_dir("injected", KD_CONFORMANCE_DEVICE="cpu", KD_CONFORMANCE_BIN=wrapper),
                         "-R", r"^conformance\.L3$")
        self.assertEqual(run.status("conformance.L3"), "fail", run.out)
        message = run.cases["conformance.L3"].find("failure").get("message")
        self.assertIn("Verdict: CHECK_FAILED .* at stage L3.product .injected fault ", message)
        mark = "[injected fault wrong-product: test only, not a diagnosis]"
        self.assertIn("Verdict: CHECK_FAILED (exit 8) at stage L3.product " + mark, run.output("conformance.L3"))
        self.assertEqual(run.status("conformance.L1"), "run", run.out)
        self.assertIn("Verdict: SELECTED_TESTS_PASSED (exit 0) " + mark, run.output("conformance.L1"))

    def test_a_layer_alone_runs_its_earlier_layers_first(self):
        run = self.ctest(self.build_conformance_dir(), "-R", r"^conformance\.L2$")
        self.assertEqual(sorted(run.cases), ["conformance.L1", "conformance.L2"], run.out)
        self.assertLess(run.out.index("conformance.L1"), run.out.index("conformance.L2"), run.out)

    def test_gpu_comes_from_the_ctest_resource_spec(self):
        spec = os.path.join(self.dir, "gpus.json")
        with open(spec, "w") as f:
            json.dump({"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": "1", "slots": 1}]}]}, f)
        only_l2 = ("-R", r"^conformance\.L2$", "-FA", ".*")  # L2 alone, whatever L1 says on this machine
        l2 = self.ctest(self.build_conformance_dir(), "--resource-spec-file", spec, *only_l2).output("conformance.L2")
        self.assertIn("kernodeck: L2 on GPU 1, assigned by CTest (CTEST_RESOURCE_GROUP_0_GPUS=id:1,slots:1)", l2)
        self.assertIn("target cuda:1", l2)
        l2 = self.ctest(self.build_conformance_dir(), *only_l2).output("conformance.L2")
        self.assertIn("target cuda:0", l2, "without a spec: the default device")
        self.assertNotIn("assigned by CTest", l2)

    def test_one_chain_per_gpu(self):
        run = self.ctest(self.settings_dir("chains", KD_CONFORMANCE_GPUS=2), "-j", "2",
                         "--resource-spec-file", os.path.join(SOURCE, "ci", "ctest-gpus.json"))
        gpu_layers = binary_layers()[1:]
        want = ["conformance.L1"] + [f"conformance.{l}{s}" for l in gpu_layers for s in ("", ".chain2")]
        self.assertEqual(sorted(run.cases), sorted(want), run.out)
        for name in want[1:]:
            if run.status(name) != "notrun":
                self.assertRegex(run.output(name), r"on GPU [0-3], assigned by CTest")
        if run.status("conformance.L2.chain2") == "fail":  # each chain stops on its own
            self.assertEqual(run.status("conformance.L3.chain2"), "notrun")
            self.assertIn("Failed test dependencies: conformance.L2.chain2", run.output("conformance.L3.chain2"))


class ConformanceAfterAPartialBuild(CTestCase):
    @needs_probe
    def test_a_layer_whose_part_is_not_built_is_the_suites_gap_with_the_build_command(self):
        """`ctest -L conformance` builds nothing: after a build of L1-L3's part alone, L4 says SUITE_INCOMPLETE (19)
        with the command that builds the missing part (never 3 or 4), and the layers after it are Not Run."""
        binary = copy_alone(self, THIS_BUILD, probe=THIS_BUILD.probe, folder=os.path.join(self.dir, "partial"))  # no libkd_probe_heavy.so
        run = self.ctest(self.settings_dir("partial", KD_CONFORMANCE_BIN=binary, KD_CONFORMANCE_DEVICE="cpu"),
                         "-R", r"^conformance\.L[1-5]$")
        for name in ("conformance.L1", "conformance.L2", "conformance.L3"):
            self.assertEqual(run.status(name), "run", run.output(name))
        out = run.output("conformance.L4")
        self.assertEqual(run.status("conformance.L4"), "fail", run.out)
        self.assertIn("Verdict: SUITE_INCOMPLETE (exit 19) at stage L1.import", out)
        command = f"cmake --build {os.path.relpath(BUILD, SOURCE)} --target kd_probe_heavy"  # as seen from the checkout
        self.assertIn("; build it with: " + command, out)
        self.assertIn("next:  " + command, out)
        self.assertNotRegex(out, r"TORCH_MISSING|TORCH_IMPORT_FAILED")
        self.assertIn("SUITE_INCOMPLETE at L1.import", run.cases["conformance.L4"].find("failure").get("message"))
        self.assertEqual(run.status("conformance.L5"), "notrun", run.out)


class ConformanceRegistration(CTestCase):
    def listed(self, test_dir):
        out = subprocess.run([CTEST, "--test-dir", test_dir, "--show-only=json-v1"], capture_output=True, text=True,
                             check=True).stdout
        return {t["name"]: {p["name"]: p["value"] for p in t.get("properties", [])} for t in json.loads(out)["tests"]}

    def test_labels_fixtures_and_resources(self):
        tests = self.listed(self.ctest_dir("whole-build", [f"subdirs({cmake_string(BUILD)})"]))
        layers = binary_layers()
        conformance = {n: p for n, p in tests.items() if "conformance" in p.get("LABELS", [])}
        self.assertEqual(sorted(conformance), sorted(f"conformance.{l}" for l in layers))
        for name, props in tests.items():  # the GPU-less CI runs -L self: no conformance test there
            self.assertFalse("self" in props.get("LABELS", []) and name in conformance, name)
        self.assertEqual(conformance["conformance.L1"]["LABELS"], ["conformance", "layer:L1"])
        self.assertNotIn("RESOURCE_GROUPS", conformance["conformance.L1"])
        for i, layer in enumerate(layers[1:], start=1):
            props = conformance[f"conformance.{layer}"]
            self.assertEqual(props["LABELS"], ["conformance", "gpu", f"layer:{layer}"])
            self.assertEqual(props["RESOURCE_GROUPS"], [{"requirements": [{".type": "gpus", "slots": 1}]}])
            self.assertEqual(props["FIXTURES_REQUIRED"], [f"kd.conformance.{l}" for l in layers[:i]])
            self.assertEqual(props["FIXTURES_SETUP"], [f"kd.conformance.{layer}"])

    def test_cpu_chain_needs_no_gpu(self):
        tests = self.listed(self.settings_dir("cpu", KD_CONFORMANCE_DEVICE="cpu"))
        for name, props in tests.items():
            self.assertNotIn("gpu", props["LABELS"], name)
            self.assertNotIn("RESOURCE_GROUPS", props, name)

    def test_a_diagnostic_that_cannot_list_its_layers_is_a_failing_test(self):
        run = self.ctest(self.settings_dir("nobin", KD_CONFORMANCE_BIN=os.path.join(self.dir, "missing")))
        self.assertNotEqual(run.rc, 0, run.out)
        self.assertEqual(list(run.cases), ["conformance.discovery"], run.out)
        self.assertEqual(run.status("conformance.discovery"), "fail")
        self.assertIn("did not list its layers", run.output("conformance.discovery"))


class JUnitSchema(CTestCase):
    def test_the_schema_rejects_what_ci_servers_could_not_read(self):
        bad = os.path.join(self.dir, "bad.xml")
        with open(bad, "w") as f:
            f.write('<testsuite name="x" tests="1"><testcase classname="no name"/></testsuite>')
        proc = subprocess.run([XMLLINT, "--noout", "--schema", JUNIT_XSD, bad], capture_output=True, text=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("'name' is required", proc.stderr)


if __name__ == "__main__":
    unittest.main()
