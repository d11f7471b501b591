"""The report holds technical facts only: no paths, no environment, no home or host names."""
import json
import os
import shutil
import socket
import subprocess
import unittest

from kd import BIN, DiagnosticTest, read

MARKER = "kdPrivateMarker7"


class Privacy(DiagnosticTest):
    def test_planted_values_stay_out_of_the_report(self):
        home = os.path.join(self.dir, f"home-{MARKER}")
        work = os.path.join(home, f"work-{MARKER}")
        os.makedirs(work)
        binary = os.path.join(work, "kernodeck-diagnostic")
        shutil.copy(BIN, binary)  # without its probe: the error message names a path under the markers
        env = dict(os.environ, HOME=home, KD_SECRET_TOKEN=f"secret-{MARKER}", **{f"{MARKER}_NAME": "x"})
        report = os.path.join(work, "report.json")
        proc = subprocess.run([binary, "--device", "cpu", "--output", report], cwd=work, env=env,
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 3, proc.stdout[-2000:])
        text = read(report)
        self.assertNotIn(MARKER, text)
        self.assertNotIn(self.dir, text)
        self.assertNotIn("KD_SECRET_TOKEN", text)
        host = socket.gethostname()
        if len(host) >= 3:
            self.assertNotIn(host, text)
        message = json.loads(text)["error"]["message"]
        self.assertIn("<path>/libkd_probe.so", message)


if __name__ == "__main__":
    unittest.main()
