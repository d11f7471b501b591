"""--output creates a new file or nothing: never overwrites, never leaves a partial file."""
import os
import unittest

import json

from kd import BIN, DiagnosticTest, read, validate
import subprocess


class NeverOverwrite(DiagnosticTest):
    def kd(self, path):
        return subprocess.run([BIN, "--device", "cpu", "--output", path], capture_output=True, text=True, timeout=60)

    def assertRefused(self, proc):
        self.assertEqual(proc.returncode, 12, proc.stderr)
        self.assertIn("OUTPUT_WRITE_FAILED", proc.stderr)
        self.assertNotIn("[ RUN      ]", proc.stdout)  # refused before anything ran
        self.assertEqual([f for f in os.listdir(self.dir) if ".kd-" in f], [], "no temporary file may remain")

    def test_existing_file_is_untouched(self):
        path = os.path.join(self.dir, "report.json")
        with open(path, "w") as f:
            f.write("precious")
        self.assertRefused(self.kd(path))
        self.assertEqual(read(path), "precious")

    def test_existing_symlink_is_untouched(self):
        target = os.path.join(self.dir, "target.txt")
        with open(target, "w") as f:
            f.write("precious")
        link = os.path.join(self.dir, "link.json")
        os.symlink(target, link)
        self.assertRefused(self.kd(link))
        self.assertEqual(os.readlink(link), target)
        self.assertEqual(read(target), "precious")

    def test_dangling_symlink_is_untouched(self):
        link = os.path.join(self.dir, "dangling.json")
        missing = os.path.join(self.dir, "nowhere.json")
        os.symlink(missing, link)
        self.assertRefused(self.kd(link))
        self.assertEqual(os.readlink(link), missing)
        self.assertFalse(os.path.exists(missing))

    def test_missing_folder(self):
        proc = self.kd(os.path.join(self.dir, "no-such-folder", "report.json"))
        self.assertRefused(proc)
        self.assertIn("does not exist", proc.stderr)

    @unittest.skipIf(os.geteuid() == 0, "root may write into a read-only folder")
    def test_read_only_folder(self):
        ro = os.path.join(self.dir, "ro")
        os.mkdir(ro, 0o555)
        self.assertRefused(self.kd(os.path.join(ro, "report.json")))
        self.assertEqual(os.listdir(ro), [])

    def test_folder_where_nothing_can_be_created(self):
        proc = self.kd("/proc/kd-report.json")  # refuses file creation, even to root
        self.assertEqual(proc.returncode, 12, proc.stderr)
        self.assertIn("OUTPUT_WRITE_FAILED", proc.stdout + proc.stderr)
        self.assertFalse(os.path.exists("/proc/kd-report.json"))

    def test_new_file_is_written_whole(self):
        path = os.path.join(self.dir, "new.json")
        proc = self.kd(path)
        self.assertIn(proc.returncode, (0, 3), proc.stdout[-2000:])
        self.assertTrue(read(path).endswith("}\n"))
        validate(json.loads(read(path)))
        self.assertEqual(sorted(os.listdir(self.dir)), ["new.json"])


if __name__ == "__main__":
    unittest.main()
