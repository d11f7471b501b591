"""--output creates a new file with the whole report. Every way it can fail (an existing file,
symlink or device, a missing, read-only or full folder, a racing writer) is a row of the fault
matrix (scenarios.py, code 12)."""
import json
import os
import subprocess
import unittest

from kd import BIN, DiagnosticTest, read, validate


class NewFile(DiagnosticTest):
    def test_new_file_is_written_whole(self):
        path = os.path.join(self.dir, "new.json")
        proc = subprocess.run([BIN, "--device", "cpu", "--output", path], capture_output=True, text=True, timeout=60)
        self.assertIn(proc.returncode, (0, 3), proc.stdout[-2000:])
        self.assertTrue(read(path).endswith("}\n"))
        validate(json.loads(read(path)))
        self.assertEqual(sorted(os.listdir(self.dir)), ["new.json"])


if __name__ == "__main__":
    unittest.main()
