"""Verdicts that do not lie: the first failure decides, the order is the contract, injected faults stay
test-only, and the report names the LibTorch really loaded."""
import json
import os
import subprocess
import unittest

from kd import BUILD, DiagnosticTest, expected_default_code, needs_probe, read

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"


@needs_probe
class FirstFailureDecides(DiagnosticTest):
    """L1.python fails first (4); the worker then dies (11) or hangs (10): the user is told the first failure."""

    def broken_torch(self):
        pkg = os.path.join(self.dir, "site", "torch")
        os.makedirs(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write("raise ImportError('broken on purpose')\n")
        return dict(os.environ, PYTHONPATH=os.path.join(self.dir, "site"))

    def test_a_crash_after_the_first_failure_is_recorded_not_reported_instead(self):
        r = self.run_kd("--device", "cpu", "--python", PYTHON, "--inject-fault", "abort", env=self.broken_torch())
        self.assertVerdict(r, "TORCH_IMPORT_FAILED", 4, "L1.python")
        self.assertEqual(r.report["after_failure"]["event"], "worker_failed")
        self.assertEqual(r.report["after_failure"]["code"], "WORKER_FAILED")
        self.assertIn("SIGABRT", r.report["after_failure"]["message"])
        self.assertTrue(r.report["after_failure"]["stage"].startswith("L3."), r.report["after_failure"])

    def test_a_timeout_after_the_first_failure_is_recorded_not_reported_instead(self):
        r = self.run_kd("--device", "cpu", "--python", PYTHON, "--inject-fault", "hang", "--timeout", "5",
                        env=self.broken_torch())
        self.assertVerdict(r, "TORCH_IMPORT_FAILED", 4, "L1.python")
        self.assertEqual(r.report["after_failure"]["event"], "timeout")
        self.assertLess(r.seconds, 15)  # the limit still holds

    def test_without_an_earlier_failure_the_crash_is_the_verdict(self):
        r = self.run_kd("--device", "cpu", "--inject-fault", "abort")
        self.assertVerdict(r, "WORKER_FAILED", 11)
        self.assertIsNone(r.report["after_failure"])


@needs_probe
class TheOrderIsTheContract(DiagnosticTest):
    def test_flags_that_change_order_or_count_are_usage_errors_and_nothing_runs(self):
        for flag in ("--gtest_shuffle", "--gtest_repeat=-1", "--gtest_random_seed=4", "--gtest_break_on_failure",
                     "--gtest_foo", "--gtest_filter"):
            r = self.run_kd("--device", "cpu", flag, report=False, timeout=30)
            self.assertEqual(r.rc, 2, (flag, r.stdout, r.stderr))
            self.assertIn(flag.split("=")[0], r.stderr)
            self.assertNotIn("Verdict", r.stdout)

    def test_gtest_variables_are_neutralized_and_named_in_the_report(self):
        plain = self.run_kd(env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        for seed in ("1", "4", "5"):
            env = dict(os.environ, CUDA_VISIBLE_DEVICES="", GTEST_SHUFFLE="1", GTEST_RANDOM_SEED=seed, GTEST_REPEAT="3")
            r = self.run_kd(env=env)
            self.assertEqual(r.report["code"], plain.report["code"], seed)
            self.assertEqual(r.report["stage"], plain.report["stage"], seed)
            self.assertEqual(r.report["requested"]["gtest_environment_ignored"],
                             ["GTEST_RANDOM_SEED", "GTEST_REPEAT", "GTEST_SHUFFLE"])
            # Each test ran once, in registry order.
            names = [(l["id"], t["name"]) for l in r.report["layers"] for t in l["tests"]]
            plain_names = [(l["id"], t["name"]) for l in plain.report["layers"] for t in l["tests"]]
            self.assertEqual(names, plain_names)
        self.assertEqual(plain.report["requested"]["gtest_environment_ignored"], [])

    def test_gtest_output_never_overwrites(self):
        path = os.path.join(self.dir, "existing.xml")
        with open(path, "w") as f:
            f.write("keep me\n")
        r = self.run_kd("--device", "cpu", f"--gtest_output=xml:{path}", report=False)
        self.assertEqual(r.rc, 12, r.stderr)
        with open(path) as f:
            self.assertEqual(f.read(), "keep me\n")


@needs_probe
class TheLibTorchReallyLoaded(DiagnosticTest):
    def test_the_report_names_the_source_of_the_loaded_libtorch(self):
        r = self.run_kd("--device", "cpu")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        # scripts/setup's private venv and Debian's package are told apart by where the library was loaded from.
        if BUILD.torch_source in ("private", "debian"):
            self.assertEqual(r.report["pytorch"]["source"], BUILD.torch_source)
        self.assertIn(r.report["pytorch"]["source"], ("private", "python", "debian", "prefix"))


class InjectedFaultsStayOutOfTheFleetView(DiagnosticTest):
    def test_aggregate_lists_injected_runs_apart_and_does_not_count_them(self):
        folder = os.path.join(self.dir, "reports")
        os.makedirs(folder)
        real = self.run_kd("--device", "cpu", "--output", os.path.join(folder, "real.json"), report=False)
        injected = self.run_kd("--device", "cpu", "--inject-fault", "wrong-product",
                               "--output", os.path.join(folder, "injected.json"), report=False)
        self.assertNotEqual(injected.rc, 0, "the injected run must fail")
        out = os.path.join(self.dir, "aggregate.json")
        a = subprocess.run([BUILD.bin, "aggregate", folder, "--output", out], capture_output=True, text=True, timeout=60)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["counts"]["injected"], 1)
        self.assertEqual(doc["counts"]["counted"], 1)
        self.assertEqual([i["fault"] for i in doc["injected"]], ["wrong-product"])
        self.assertEqual(a.returncode, 0 if real.rc == 0 else 20, a.stdout)
        self.assertIn("fault injection", a.stdout)


class ToolkitlessBuild(DiagnosticTest):
    """A CUDA pip torch is built from its own files, with or without the CUDA toolkit, and never reported missing
    (.ci/run's toolkitless configuration runs this with the toolkit hidden: scripts/without-cuda-toolkit)."""

    def test_the_build_path_matches_the_machine_and_the_verdict_never_says_missing(self):
        nvcc = any(os.access(os.path.join(d, "nvcc"), os.X_OK)
                   for d in os.environ.get("PATH", "").split(":") + ["/usr/local/cuda/bin"] if d)
        if BUILD.backend == "cuda" and BUILD.torch_source in ("private", "python"):  # a pip torch: its own files
            self.assertEqual(BUILD.torch_build_path, "wheel")
        elif BUILD.backend == "cuda" and not nvcc:  # LibTorch's own config cannot work without nvcc
            self.assertEqual(BUILD.torch_build_path, "wheel")
        if BUILD.torch_build_path == "wheel":  # which crt/ and nv/target, and the configure output says so
            self.assertIn(BUILD.cuda_names, ("wheel", "declared"))
            log = os.path.join(BUILD.folder, "configure.log")  # scripts/build's
            if os.path.exists(log):
                said = "declared by probe/cuda_names" if BUILD.cuda_names == "declared" else "with their own crt/"
                self.assertIn(said, read(log))
                self.assertIn("nothing is downloaded", read(log))
        if BUILD.torch_unbuildable:  # the suite's gap, with the command that builds it: never 3 or 4
            r = self.run_kd("--device", "cpu")
            self.assertVerdict(r, "SUITE_INCOMPLETE", 19)
            return
        code, exit_code = expected_default_code()
        r = self.run_kd()
        self.assertVerdict(r, code, exit_code)
        cpu = self.run_kd("--device", "cpu")
        if BUILD.have_probe:
            self.assertVerdict(cpu, "CPU_CHECK_PASSED", 0)
            self.assertEqual(cpu.report["pytorch"]["backend"], "cuda" if BUILD.backend == "cuda" else "none")


if __name__ == "__main__":
    unittest.main()
