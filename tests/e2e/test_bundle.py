"""--bundle DIR: a new folder with the documented files, no machine paths, never an existing path."""
import json
import os
import unittest

from kd import DiagnosticTest, needs_probe

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

    def test_a_missing_parent_folder_is_refused(self):
        r = self.run_kd("--device", "cpu", "--bundle", os.path.join(self.dir, "no", "bundle"), report=False)
        self.assertEqual(r.rc, 12)


if __name__ == "__main__":
    unittest.main()
