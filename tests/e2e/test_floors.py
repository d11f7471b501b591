"""--floors FILE (docs/fleets.md "Floors per SKU"): the per-SKU floors file is checked whole before anything runs;
bad input (not JSON, unknown keys, values out of range, too large, unreadable) is a usage error (2) with a message
that names what is wrong, and no report. A good file is recorded (requested.floors) and travels to the worker. Its
effect on L6 (a GPU's ceilings) is checked on a GPU machine (scripts/gpu-verify-rented-box); L8's re-measurement
with its floor on the CPU: test_collective.py."""
import json
import os
import unittest

from kd import DiagnosticTest, HAVE_PROBE

GOOD = {"devices": {"NVIDIA H200": {"copy_tb_s": 3.9, "matmul_bf16_tflops": 620, "bus_bandwidth_gb_s": 150},
                    "NVIDIA H100 80GB HBM3": {"copy_tb_s": 2.8}}}


class Floors(DiagnosticTest):
    def floors_file(self, content, name="floors.json"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def refused(self, path, words):
        out = os.path.join(self.dir, "never.json")
        r = self.run_kd("--device", "cpu", "--floors", path, "--output", out, report=False)
        self.assertEqual(r.rc, 2, r.stdout + r.stderr)
        self.assertIn(f"kernodeck-diagnostic: usage error: --floors {path}: ", r.stderr)
        self.assertIn(words, r.stderr)
        self.assertFalse(os.path.exists(out), "nothing runs after a usage error")
        self.assertNotIn("Verdict:", r.stdout)

    def test_bad_input_is_a_usage_error_before_anything_runs(self):
        cases = [
            ("{not json", "not JSON: "),
            ([1, 2], "the file must be a JSON object"),
            ({"devices": {}}, "'devices' must be an object with at least one device name"),
            ({"devices": {"NVIDIA H200": {"copy_tb_s": 3}}, "version": 1}, "unknown key 'version'"),
            ({"devices": {"NVIDIA H200": {"copy_tbs": 3}}}, "devices.\"NVIDIA H200\": unknown key 'copy_tbs'"),
            ({"devices": {"NVIDIA H200": {"copy_tb_s": 0}}},
             "devices.\"NVIDIA H200\".copy_tb_s must be a number of TB/s above 0 and at most 100 (L6's copy bandwidth), "
             "not 0"),
            ({"devices": {"NVIDIA H200": {"matmul_bf16_tflops": -5}}}, "matmul_bf16_tflops must be a number of TFLOP/s"),
            ({"devices": {"NVIDIA H200": {"bus_bandwidth_gb_s": 1e9}}}, "at most 100000"),
            ({"devices": {"NVIDIA H200": {"copy_tb_s": "3.9"}}}, "not \"3.9\""),
            ({"devices": {"NVIDIA H200": {"copy_tb_s": True}}}, "not true"),
            ({"devices": {"NVIDIA H200": {}}}, "must be an object with at least one floor (copy_tb_s, "),
            ({"devices": {"": {"copy_tb_s": 3}}}, "a device name is empty"),
        ]
        for i, (content, words) in enumerate(cases):
            with self.subTest(words=words):
                self.refused(self.floors_file(content, f"bad-{i}.json"), words)
        self.refused(self.floors_file(" " * (64 * 1024) + "{}", "large.json"), "the file is larger than 64 KiB")
        self.refused(os.path.join(self.dir, "missing.json"), "cannot be read: No such file or directory")
        self.refused(self.dir, "cannot be read")

    @unittest.skipUnless(HAVE_PROBE, "a pass needs LibTorch")
    def test_a_good_file_is_recorded_and_a_cpu_run_still_passes(self):
        r = self.run_kd("--device", "cpu", "--floors", self.floors_file(GOOD))
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertIs(r.report["requested"]["floors"], True)
        self.assertNotIn("floors.json", json.dumps(r.report))  # never the path


if __name__ == "__main__":
    unittest.main()
