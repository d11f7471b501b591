"""The tool's own evidence can fail and shows its skips: an e2e module's closing line and its CTest skip
(run_module.py), scripts/test's totals and its refusal of a label that runs no test (scripts/lib/run-tests), and
the GPU verification scripts' comparison of every case with what it must give (scripts/lib/verify.sh), run here
on the diagnostic's default run with one case changed to expect another code."""
import os
import re
import subprocess
import sys
import textwrap

from kd import BIN, DiagnosticTest, expected_default_code

E2E = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(E2E))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return path


class ModuleRunner(DiagnosticTest):
    """tests/e2e/run_module.py on modules written here."""

    def run_module(self, name, source):
        write(os.path.join(self.dir, "mods", f"{name}.py"), source)
        counts = os.path.join(self.dir, "counts")
        env = {**os.environ, "PYTHONPATH": os.path.join(self.dir, "mods"), "KD_TEST_COUNTS": counts}
        proc = subprocess.run([sys.executable, os.path.join(E2E, "run_module.py"), name], capture_output=True, text=True,
                              env=env, timeout=60)
        with open(os.path.join(counts, f"e2e.{name}.txt")) as f:
            self.counts_file = f.read()
        self.assertTrue(self.counts_file.startswith(f"e2e {name}: {proc.stdout.splitlines()[-1]}\n"), self.counts_file)
        return proc.returncode, proc.stdout.splitlines()[-1]

    def test_a_module_whose_tests_all_skip_is_a_ctest_skip(self):
        rc, line = self.run_module("all_skip", """
            import unittest
            @unittest.skip("needs a GPU")
            class A(unittest.TestCase):
                def test_one(self): pass
                def test_two(self): pass
            """)
        self.assertEqual((rc, line), (77, "0 passed, 0 failed, 2 skipped"))

    def test_some_skips_pass_and_are_counted(self):
        rc, line = self.run_module("some_skip", """
            import unittest
            class A(unittest.TestCase):
                def test_one(self): pass
                def test_two(self): self.skipTest("not here")
            """)
        self.assertEqual((rc, line), (0, "1 passed, 0 failed, 1 skipped"))
        self.assertIn("  skipped A.test_two: not here\n", self.counts_file)  # which one, and why

    def test_a_test_with_failing_subtests_counts_once_and_fails(self):
        rc, line = self.run_module("subtests", """
            import unittest
            class A(unittest.TestCase):
                def test_many(self):
                    for i in range(3):
                        with self.subTest(i=i):
                            self.assertEqual(i, 0)
                def test_error(self): raise RuntimeError("broken")
                def test_fine(self): pass
            """)
        self.assertEqual((rc, line), (1, "1 passed, 2 failed, 0 skipped"))

    def test_a_module_that_cannot_be_imported_or_has_no_test_fails(self):
        self.assertEqual(self.run_module("broken", "import no_such_module_here\n"), (1, "0 passed, 1 failed, 0 skipped"))
        self.assertEqual(self.run_module("empty", "x = 1\n"), (1, "0 passed, 0 failed, 0 skipped"))


class RunTests(DiagnosticTest):
    """scripts/lib/run-tests (scripts/test after its build) on a ctest folder of tests written here."""

    def setUp(self):
        super().setUp()
        counts = os.path.join(self.dir, "test-counts")
        module = f"mkdir -p {counts} && echo 'e2e {{0}}: {{1}}' > {counts}/e2e.{{0}}.txt"
        write(os.path.join(self.dir, "CTestTestfile.cmake"), f"""
            add_test(passes sh -c "{module.format('passes', '3 passed, 0 failed, 1 skipped')}")
            add_test(skips sh -c "{module.format('skips', '0 passed, 0 failed, 2 skipped')}; exit 77")
            add_test(fails sh -c "exit 1")
            set_tests_properties(passes skips PROPERTIES LABELS demo SKIP_RETURN_CODE 77)
            set_tests_properties(fails PROPERTIES LABELS broken)
            """)

    def run_tests(self, label):
        env = {k: v for k, v in os.environ.items() if k != "KD_TEST_TOTALS"}  # CI's own, when .ci/run runs this
        env.update(KD_BUILD_DIR=self.dir, KD_TEST_JOBS="1")
        proc = subprocess.run([os.path.join(ROOT, "scripts", "lib", "run-tests"), label], capture_output=True,
                              text=True, env=env, timeout=120)
        with open(os.path.join(self.dir, "test-totals.txt")) as f:
            return proc.returncode, proc.stdout + proc.stderr, f.read().strip()

    def test_the_totals_count_skips_apart_from_passes(self):
        rc, out, totals = self.run_tests("demo")
        self.assertEqual(rc, 0, out)
        self.assertEqual(totals, "totals of ctest -L 'demo': CTest tests 1 passed, 0 failed, 1 skipped (skips); "
                                 "e2e modules' tests (2) 3 passed, 0 failed, 3 skipped")
        self.assertIn("kernodeck: " + totals, out)

    def test_a_failure_fails_and_is_counted(self):
        rc, out, totals = self.run_tests("demo|broken")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("CTest tests 1 passed, 1 failed, 1 skipped", totals)

    def test_a_label_that_selects_no_test_fails(self):
        rc, out, totals = self.run_tests("demo-typo")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("No tests were found", out)
        self.assertEqual(totals, "totals of ctest -L 'demo-typo': no test ran")


class VerifyCases(DiagnosticTest):
    """scripts/lib/verify.sh, as scripts/gpu-verify and scripts/gpu-verify-rented-box use it, on the default run of
    this build on this machine (whatever its verdict here) and on its --device cpu run when it has a probe."""

    def verify(self, *lines):
        script = write(os.path.join(self.dir, "cases.sh"), "\n".join([
            f"source {ROOT}/scripts/lib/common.sh", f"source {ROOT}/scripts/lib/verify.sh",
            f"out={self.dir}/out B={BIN}", "verify_start", *lines, "verify_summary"]) + "\n")
        proc = subprocess.run(["bash", script], capture_output=True, text=True, timeout=300)
        return proc.returncode, proc.stdout, proc.stderr

    def test_every_case_as_expected_exits_zero(self):
        code, exit_code = expected_default_code()
        rc, out, err = self.verify(f"case_ default {code}/{exit_code} --", f"case_ default_again {code}/{exit_code}/* --",
                                   f"check_ a_count 3 3")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(out.splitlines()[-1], "3 cases, 3 as expected, 0 differed")
        self.assertRegex(out, rf"(?m)^default +want {code}/{exit_code} +got {code}/{exit_code}/\S+ .* ok")

    def test_a_case_changed_to_expect_another_code_fails_naming_it(self):
        code, exit_code = expected_default_code()
        other = "CHECK_FAILED/8" if code != "CHECK_FAILED" else "TIMEOUT/10"
        rc, out, err = self.verify(f"case_ default {code}/{exit_code} --", f"case_ changed {other} --",
                                   f"case_ wrong_stage {code}/{exit_code}/L9.nowhere --", "check_ ctest_exit 0 8")
        self.assertEqual(rc, 1, out + err)
        summary = out.splitlines()[-1]
        self.assertRegex(summary, r"^4 cases, 1 as expected, 3 differed: ")
        self.assertIn(f"changed (want {other}, got {code}/{exit_code}/", summary)
        self.assertIn(f"wrong_stage (want {code}/{exit_code}/L9.nowhere, got {code}/{exit_code}/", summary)
        self.assertIn("ctest_exit (want 0, got 8)", summary)
        self.assertRegex(out, r"(?m)^changed +want .* DIFFERS")

    def test_alternatives_are_as_expected_when_the_run_gives_one_of_them(self):
        code, exit_code = expected_default_code()
        other = "CHECK_FAILED/8" if code != "CHECK_FAILED" else "TIMEOUT/10"
        rc, out, err = self.verify(f'case_ either "{other} | {code}/{exit_code}/*" --',
                                   f'case_ neither "{other} | TIMEOUT/10/L9.nowhere" --')
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out.splitlines()[-1], rf"^2 cases, 1 as expected, 1 differed: neither \(want {other} \| ")

    def test_a_case_that_left_no_verdict_differs(self):
        rc, out, _ = self.verify("B=/bin/false case_ no_verdict GPU_CHECK_PASSED/0 --")
        self.assertEqual(rc, 1, out)
        self.assertIn("no_verdict (want GPU_CHECK_PASSED/0, got (none)/1/-)", out.splitlines()[-1])

    def test_no_case_at_all_is_not_a_pass(self):
        rc, out, _ = self.verify()
        self.assertEqual(rc, 1, out)
        self.assertEqual(out.splitlines()[-1], "0 cases: nothing was verified")

    def test_the_scripts_expect_codes_of_the_readme_with_their_exit(self):
        # Every case of both scripts names a code of README's table and that code's exit, so that a typo in an
        # expectation cannot send the GPU run looking for a code that does not exist.
        with open(os.path.join(ROOT, "README.md")) as f:
            rows = re.findall(r"^\| ([A-Z_ /]+) \| (\d+) \|", f.read(), re.M)  # "OUT_OF_MEMORY / RUNTIME_ERROR | 9"
        table = {code: exit_code for codes, exit_code in rows for code in codes.split(" / ")}
        self.assertEqual((table["RUNTIME_ERROR"], table["GPU_UNHEALTHY"]), ("9", "18"))
        for script in ("gpu-verify", "gpu-verify-rented-box"):
            with open(os.path.join(ROOT, "scripts", script)) as f:
                text = f.read()
            self.assertIn("source \"$(dirname \"$0\")/lib/verify.sh\"", text, script)
            self.assertNotRegex(text, r"(?m)^\s*case_\(\)", f"{script} defines its own case_")
            wants = [w.strip('"') for w in re.findall(r"(?m)^[^#\n]*\bcase_ \S+ (\S+)", text)]  # comments aside
            self.assertGreater(len(wants), 20, script)
            for want in wants:
                with self.subTest(script=script, want=want):
                    m = re.fullmatch(r"([A-Z_]+)/(\d+)(?:/\S+)?", want)
                    self.assertIsNotNone(m, want)
                    self.assertEqual(table.get(m[1]), m[2], want)
