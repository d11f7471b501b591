"""cmake --install: the binary, the probe, the schema and the CI templates; the installed
binary runs without the build tree (the dynamic loader's own trace proves it)."""
import json
import os
import shutil
import subprocess
import unittest

import jsonschema

from ctest_run import BUILD, SOURCE
from kd import BIN, HAVE_PROBE, DiagnosticTest, read, schema_validator

CMAKE = os.environ["KD_CMAKE"]


class Install(DiagnosticTest):
    def setUp(self):
        super().setUp()
        self.prefix = os.path.join(self.dir, "prefix")
        proc = subprocess.run([CMAKE, "--install", BUILD, "--prefix", self.prefix], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.libexec = os.path.join(self.prefix, "libexec", "kernodeck")
        self.share = os.path.join(self.prefix, "share", "kernodeck-conformance")

    def loader_trace(self, binary, *args):
        """Runs binary with the dynamic loader tracing every library it searches and loads (worker too)."""
        report = os.path.join(self.dir, f"report-{len(os.listdir(self.dir))}.json")
        env = dict(os.environ, LD_DEBUG="libs,files")
        env.pop("LD_LIBRARY_PATH", None)
        proc = subprocess.run([binary, *args, "--output", report], capture_output=True, text=True, env=env,
                              cwd=self.dir, timeout=120)
        return proc, json.loads(read(report))

    def test_layout(self):
        link = os.path.join(self.prefix, "bin", "kernodeck-diagnostic")
        self.assertTrue(os.path.islink(link))
        self.assertEqual(os.path.realpath(link), os.path.join(self.libexec, "kernodeck-diagnostic"))
        self.assertEqual(os.path.exists(os.path.join(self.libexec, "libkd_probe.so")), HAVE_PROBE)
        self.assertTrue(os.access(os.path.join(self.libexec, "kernodeck-diagnostic-full"), os.X_OK))  # L4-L8, aggregate
        self.assertEqual(read(os.path.join(self.share, "schema", "report.schema.json")),
                         read(os.path.join(SOURCE, "schema", "report.schema.json")))
        for name in ("github-actions.yml", "gitlab-ci.yml", "ctest-gpus.json", "kubernetes/kernodeck-job.yaml",
                     "slurm/kernodeck.sbatch", "slurm/node-health"):
            self.assertEqual(read(os.path.join(self.share, "ci", name)), read(os.path.join(SOURCE, "ci", name)), name)
        for name in ("kernodeck.sbatch", "node-health"):  # node-health is named in slurm.conf as installed
            self.assertTrue(os.access(os.path.join(self.share, "ci", "slurm", name), os.X_OK), name)
        # node-problem-detector runs its plugin as installed (ci/kubernetes/node-problem-detector)
        self.assertTrue(os.access(os.path.join(self.share, "ci", "kubernetes", "node-problem-detector",
                                               "kernodeck-npd-check"), os.X_OK))
        self.assertEqual(read(os.path.join(self.share, "schema", "aggregate.schema.json")),
                         read(os.path.join(SOURCE, "schema", "aggregate.schema.json")))

    def test_no_rpath_points_into_the_build_tree(self):
        readelf = shutil.which("readelf")
        self.assertIsNotNone(readelf, "readelf (binutils) comes with g++")
        for name in os.listdir(self.libexec):
            dyn = subprocess.run([readelf, "-d", os.path.join(self.libexec, name)], capture_output=True,
                                 text=True, check=True).stdout
            self.assertNotIn(BUILD, dyn, name)

    def test_installed_binary_runs_without_the_build_tree(self):
        proc, report = self.loader_trace(os.path.join(self.prefix, "bin", "kernodeck-diagnostic"), "--device", "cpu")
        schema_validator(json.loads(read(os.path.join(self.share, "schema", "report.schema.json")))) \
            .validate(report)
        want = ("CPU_CHECK_PASSED", 0) if HAVE_PROBE else ("TORCH_MISSING", 3)
        self.assertEqual((report["code"], proc.returncode), want, proc.stdout[-3000:])
        self.assertNotIn(BUILD, proc.stderr, "the installed diagnostic searched or loaded something in the build tree")
        if HAVE_PROBE:
            self.assertIn(f"file={self.libexec}/libkd_probe.so", proc.stderr)  # the worker loaded the installed probe

    def test_installed_full_program_takes_the_runs_that_need_it(self):
        # --layers L6 is kernodeck-diagnostic-full's: the installed one, beside the installed diagnostic, runs it.
        proc, report = self.loader_trace(os.path.join(self.prefix, "bin", "kernodeck-diagnostic"), "--device", "cpu",
                                         "--layers", "L6")
        self.assertNotEqual(report["code"], "SUITE_INCOMPLETE", proc.stdout[-3000:])
        self.assertNotIn(BUILD, proc.stderr)
        self.assertIn(f"{self.libexec}/kernodeck-diagnostic-full", proc.stderr)

    def test_the_trace_would_show_the_build_tree(self):
        # The control: the same trace of the build's own binary names the build tree.
        proc, _ = self.loader_trace(BIN, "--device", "cpu")
        if HAVE_PROBE:
            self.assertIn(f"file={BUILD}/libkd_probe.so", proc.stderr)
        self.assertIn("calling init", proc.stderr)


if __name__ == "__main__":
    unittest.main()
