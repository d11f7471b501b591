"""--bundle DIR: a new folder with the documented files, no machine paths, never an existing path."""
import json
import os
import subprocess
import time
import unittest

from kd import BIN, DiagnosticTest, needs_probe

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
FILES = {"command.json", "versions.json", "parameters.json", "input.json", "steps.json", "memory.json",
         "outputs.json", "report.json"}


@needs_probe
class Bundle(DiagnosticTest):
    def test_bundle_holds_the_documented_files_without_paths(self):
        folder = os.path.join(self.dir, "bundle")
        r = self.run_kd("--device", "cpu", "--model", os.path.join(DATA, "tiny_model.pt"),
                        "--input", os.path.join(DATA, "tiny_spec.json"), "--bundle", folder)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(set(os.listdir(folder)), FILES)
        self.assertEqual(set(os.listdir(self.dir)) - {"bundle"}, {n for n in os.listdir(self.dir) if n.startswith("report-")})
        text = {n: open(os.path.join(folder, n)).read() for n in FILES}
        for name, content in text.items():
            self.assertNotIn(self.dir, content, name)
            self.assertNotIn(DATA, content, name)
            self.assertNotIn(os.path.abspath(DATA), content, name)
        bundled = json.loads(text["report.json"])
        self.assertEqual(bundled["run_id"], r.report["run_id"])
        self.assertTrue(bundled["requested"]["bundle"])
        self.assertIn("<file>", json.loads(text["command.json"])["arguments"])
        steps = json.loads(text["steps.json"])
        self.assertEqual(steps["last_successful_step"], {"layer": "L4", "test": "StopResume"})  # the last L4 step
        self.assertIsNone(steps["first_error"])
        self.assertEqual(json.loads(text["input.json"])["spec"]["inputs"][0]["shape"], [4, 8])
        self.assertIsNone(json.loads(text["memory.json"])["observations"])
        self.assertEqual(json.loads(text["outputs.json"])["app"]["model"]["contract"], "passed")

    def test_a_failed_run_records_its_first_error(self):
        folder = os.path.join(self.dir, "bundle")
        r = self.run_kd("--device", "cpu", "--layers", "app", "--inject-fault", "wrong-product", "--bundle", folder)
        self.assertVerdict(r, "CHECK_FAILED", 8)
        steps = json.load(open(os.path.join(folder, "steps.json")))
        self.assertEqual(steps["first_error"]["code"], "CHECK_FAILED")
        self.assertEqual(steps["stage"], "L3.product")

    def test_an_existing_path_is_refused_before_running(self):
        for name in ("folder", "file", "link"):
            path = os.path.join(self.dir, name)
            if name == "folder":
                os.mkdir(path)
            elif name == "file":
                open(path, "w").close()
            else:
                os.symlink(os.path.join(self.dir, "nowhere"), path)
            r = self.run_kd("--device", "cpu", "--bundle", path, report=False)
            self.assertEqual(r.rc, 12, name)
            self.assertIn("already exists", r.stderr)
            self.assertNotIn("Verdict:", r.stdout)  # nothing ran
        self.assertEqual(os.listdir(os.path.join(self.dir, "folder")), [])

    def test_the_bundle_is_removed_again_when_the_report_cannot_be_saved(self):
        """A bundle is only kept beside a report that agrees with the exit code. --inject-fault slow-save
        (test only) pauses after the bundle: the report's path is taken then, so its write fails (12)."""
        bundle, report = os.path.join(self.dir, "bundle"), os.path.join(self.dir, "report.json")
        proc = subprocess.Popen([BIN, "--device", "cpu", "--inject-fault", "slow-save", "--bundle", bundle,
                                 "--output", report], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 110
        while not os.path.exists(bundle) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertTrue(os.path.exists(bundle), "the bundle was not written")
        with open(report, "w") as f:
            f.write("precious")
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 12, out + err)
        self.assertIn("appeared while the run was in progress", out)
        self.assertEqual(os.listdir(self.dir), ["report.json"], "a bundle contradicting the exit code must not stay")
        with open(report) as f:
            self.assertEqual(f.read(), "precious")
        self.assertIn("Not kept, since the report could not be saved: the bundle\n", out)
        self.assertNotIn("Bundle:", out)

    def test_a_missing_parent_folder_is_refused(self):
        r = self.run_kd("--device", "cpu", "--bundle", os.path.join(self.dir, "no", "bundle"), report=False)
        self.assertEqual(r.rc, 12)


if __name__ == "__main__":
    unittest.main()
