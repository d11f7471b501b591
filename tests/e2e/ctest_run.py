"""Helpers for the tests of the conformance chain: run ctest on the build's conformance tests
in a folder of the test's own (so the running ctest's logs stay untouched) and read JUnit."""
import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from kd import DiagnosticTest

BUILD = os.environ["KD_BUILD_DIR"]
SOURCE = os.environ["KD_SOURCE_DIR"]
CTEST = os.environ["KD_CTEST"]
XMLLINT = os.environ["KD_XMLLINT"]
JUNIT_XSD = os.path.join(SOURCE, "schema", "junit.xsd")


def cmake_string(s):
    return "[==[" + s + "]==]"


class CTestRun:
    def __init__(self, proc, junit):
        self.rc = proc.returncode
        self.out = proc.stdout + proc.stderr
        self.cases = {}
        if junit and os.path.exists(junit):
            self.cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}

    def status(self, name):
        return self.cases[name].get("status")

    def output(self, name):
        out = self.cases[name].find("system-out")
        return (out.text or "") if out is not None else ""


class CTestCase(DiagnosticTest):
    def ctest_dir(self, name, lines):
        """A ctest folder whose CTestTestfile.cmake holds lines; ctest reads the build's CTestCustom.cmake too."""
        return self.write_ctest_dir(tempfile.mkdtemp(prefix=name + "-", dir=self.dir), lines)

    @staticmethod
    def write_ctest_dir(d, lines):
        with open(os.path.join(d, "CTestTestfile.cmake"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(d, "CTestCustom.cmake"), "w") as f:
            f.write(f"include({cmake_string(os.path.join(BUILD, 'CTestCustom.cmake'))})\n")
        return d

    def build_conformance_dir(self):
        """The build's own conformance tests, exactly as `ctest --test-dir build` sees them."""
        return self.ctest_dir("build-tests", [f"subdirs({cmake_string(os.path.join(BUILD, 'ctest'))})"])

    def settings_dir(self, name, **overrides):
        """The build's conformance settings with some changed (KD_CONFORMANCE_DEVICE=cpu, ...)."""
        lines = [f"include({cmake_string(os.path.join(BUILD, 'ctest', 'conformance-settings.cmake'))})"]
        lines += [f"set({k} {cmake_string(str(v))})" for k, v in overrides.items()]
        lines.append(f"include({cmake_string(os.path.join(SOURCE, 'ctest', 'conformance_tests.cmake'))})")
        return self.ctest_dir(name, lines)

    def ctest(self, test_dir, *args, junit=True):
        path = os.path.join(test_dir, "junit.xml") if junit else None
        argv = [CTEST, "--test-dir", test_dir, "-L", "conformance", "--no-tests=error", *args]
        if path:
            argv += ["--output-junit", path]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        run = CTestRun(proc, path)
        if path:
            self.assertJUnitValid(path)
        return run

    def assertJUnitValid(self, path):
        proc = subprocess.run([XMLLINT, "--noout", "--schema", JUNIT_XSD, path], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
