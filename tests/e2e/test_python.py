"""--python PATH: the project's interpreter and its torch, with a real interpreter and stand-in torch packages."""
import json
import os
import subprocess
import sys
import unittest

from kd import DiagnosticTest, needs_probe

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


@needs_probe
class ProjectPython(DiagnosticTest):
    def with_torch(self, init_py):
        """PYTHONPATH with a stand-in `torch` package whose __init__ is init_py."""
        pkg = os.path.join(self.dir, "site", "torch")
        os.makedirs(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write(init_py)
        return dict(os.environ, PYTHONPATH=os.path.join(self.dir, "site"))

    def run_py(self, env=None, python=PYTHON):
        return self.run_kd("--device", "cpu", "--python", python, env=env)

    def cpu_report(self):
        return self.run_kd("--device", "cpu").report["pytorch"]

    def test_matching_torch_passes_without_warning(self):
        pt = self.cpu_report()
        cuda = repr(pt["cuda_compiled"])
        env = self.with_torch(f"__version__ = '{pt['version']}+cu999'\nclass version:\n    cuda = {cuda}\n    hip = None\n")
        r = self.run_py(env)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["python"]["import"], "ok")
        self.assertEqual(r.report["python"]["torch_version"], f"{pt['version']}+cu999")
        self.assertFalse([w for w in r.report["warnings"] if "--python" in w], r.report["warnings"])
        self.assertIn(f"Python ({PYTHON})", r.stdout)  # the terminal may show the path ...
        self.assertNotIn(PYTHON, json.dumps(r.report))  # ... the report never

    def test_different_torch_is_a_warning_not_a_failure(self):
        env = self.with_torch("__version__ = '1.2.3'\nclass version:\n    cuda = '9.9'\n    hip = None\n")
        r = self.run_py(env)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        warning = [w for w in r.report["warnings"] if "--python" in w]
        self.assertEqual(len(warning), 1, r.report["warnings"])
        self.assertIn("1.2.3", warning[0])
        self.assertIn(self.cpu_report()["version"], warning[0])

    def test_torch_missing_is_3(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(self.dir, "nothing"), PYTHONNOUSERSITE="1")
        r = self.run_py(env)
        if r.report["python"]["import"] == "ok":
            self.skipTest(f"{PYTHON} has torch installed")
        self.assertVerdict(r, "TORCH_MISSING", 3, "L1.python")
        self.assertIn("No module named 'torch'", r.report["error"]["message"])

    def test_torch_failing_to_import_is_4(self):
        env = self.with_torch("raise ImportError('libcudart.so.13: cannot open shared object file: No such file or directory')\n")
        r = self.run_py(env)
        self.assertVerdict(r, "TORCH_IMPORT_FAILED", 4, "L1.python")
        self.assertIn("ImportError", r.report["error"]["message"])

    def test_missing_dependency_of_torch_is_4_not_3(self):
        r = self.run_py(self.with_torch("import numpy_is_not_here\n"))
        self.assertVerdict(r, "TORCH_IMPORT_FAILED", 4, "L1.python")

    def test_hung_interpreter_ends_on_time_and_is_not_left_behind(self):
        fake = os.path.join(self.dir, "python-that-hangs")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\nexec sleep 297\n")
        os.chmod(fake, 0o755)
        r = self.run_kd("--device", "cpu", "--python", fake, "--timeout", "5")
        self.assertVerdict(r, "TIMEOUT", 10, "L1.python")
        self.assertLess(r.seconds, 6.0)
        left = subprocess.run(["pgrep", "-f", "sleep 297"], capture_output=True, text=True).stdout
        self.assertEqual(left, "", "the interpreter outlived the run")

    def test_no_such_interpreter_is_a_usage_error(self):
        r = self.run_kd("--device", "cpu", "--python", os.path.join(self.dir, "no-python"))
        self.assertEqual(r.rc, 2)
        self.assertIsNone(r.report)  # nothing ran, nothing written
        self.assertIn("--python", r.stderr)


if __name__ == "__main__":
    unittest.main()
