"""kernodeck-diagnostic aggregate over real reports of this build: counts, the failing machine with
layer and stage, every report not counted named, the exit codes scripts read, the new-file rule,
and the JSON and Markdown validated (schema/aggregate.schema.json)."""
import json
import os
import subprocess
import unittest

import jsonschema

from kd import BIN, BUILD, DiagnosticTest, copy_alone, needs_probe, read, schema_validator, validate

AGGREGATE_SCHEMA = json.load(open(os.path.join(os.path.dirname(BUILD.schema), "aggregate.schema.json")))
HIDDEN_GPU = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # a real failure on every build (3, 5 or 6)


class Aggregate(DiagnosticTest):
    def report(self, name, *args, env=None):
        """A real report of this build at self.dir/reports/NAME."""
        os.makedirs(os.path.join(self.dir, "reports"), exist_ok=True)
        path = os.path.join(self.dir, "reports", name)
        proc = subprocess.run([BIN, *args, "--output", path], capture_output=True, text=True, env=env, timeout=120)
        data = json.loads(read(path))
        validate(data)
        self.assertEqual(data["exit_code"], proc.returncode)
        return path, data

    def aggregate(self, *args, binary=BIN, out=True):
        """Runs aggregate; out=True: with --output and --summary-md in self.dir, both validated/read."""
        argv = [binary, "aggregate", *args]
        paths = os.path.join(self.dir, "aggregate.json"), os.path.join(self.dir, "summary.md")
        if out:
            argv += ["--output", paths[0], "--summary-md", paths[1]]
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60)
        proc.data = proc.md = None
        if out and proc.returncode in (0, 20, 21, 22):
            proc.data = json.loads(read(paths[0]))
            schema_validator(AGGREGATE_SCHEMA).validate(proc.data)
            self.assertEqual(proc.data["exit_code"], proc.returncode, "exit code and aggregate must agree")
            proc.md = read(paths[1])
        return proc

    def failing_report(self, name="failing.json"):
        path, data = self.report(name, env=HIDDEN_GPU)
        self.assertNotEqual(data["exit_code"], 0)
        return path, data

    @needs_probe
    def test_a_folder_with_a_passing_and_a_failing_machine(self):
        self.report("node-a.json", "--device", "cpu")
        bad, bad_data = self.failing_report("node-b.json")
        p = self.aggregate(os.path.join(self.dir, "reports"))
        self.assertEqual(p.returncode, 20, p.stdout + p.stderr)
        d = p.data
        self.assertEqual(d["counts"], {"reports": 2, "counted": 2, "passed": 1, "failed": 1, "not_counted": 0, "injected": 0})
        self.assertIn({"code": "CPU_CHECK_PASSED", "exit_code": 0, "count": 1}, d["codes"])
        self.assertIn({"code": bad_data["code"], "exit_code": bad_data["exit_code"], "count": 1}, d["codes"])
        [f] = d["failing"]
        self.assertEqual((f["report"], f["run_id"], f["code"], f["stage"]),
                         (bad, bad_data["run_id"], bad_data["code"], bad_data["stage"]))
        self.assertEqual(f["layer"], bad_data["stage"].split(".")[0])
        # Counted by their action too (docs/fleets.md "Actions"), the failing machine with its own.
        action = bad_data["error"]["action"]
        self.assertEqual(f["action"], action)
        node = action in ("reset_gpu", "drain_node", "replace_gpu")
        self.assertEqual(d["actions"], [{"action": action, "node_at_fault": node, "count": 1}])
        self.assertIn(f"  {action:<16} 1 machine{' (the node is at fault)' if node else ''}\n", p.stdout)
        self.assertIn(f"| `{action}` | 1 | {'yes' if node else 'no'} |", p.md)
        self.assertEqual(d["versions"]["libtorch"], [{"value": bad_data["pytorch"]["version"], "count": 2}])
        self.assertIn(f"  {bad}  {bad_data['code']} (exit {bad_data['exit_code']}), layer {f['layer']}", p.stdout)
        self.assertIn("Aggregate: FAILED (exit 20): 1 of 2 machines failed\n", p.stdout)
        self.assertIn(f"| `{bad_data['code']}` | {bad_data['exit_code']} | 1 |", p.md)

    def test_every_report_not_counted_is_named(self):
        good, _ = self.failing_report("good.json")
        truncated = os.path.join(self.dir, "reports", "truncated.json")
        with open(truncated, "w") as f:
            f.write(read(good)[:100])
        other = os.path.join(self.dir, "reports", "v2.json")
        with open(other, "w") as f:
            json.dump({**json.loads(read(good)), "schema_version": "2.0"}, f)
        gone = os.path.join(self.dir, "reports", "gone.json")
        empty_folder = os.path.join(self.dir, "empty")
        os.mkdir(empty_folder)
        p = self.aggregate(good, truncated, other, gone, empty_folder, good)
        self.assertEqual(p.returncode, 22, p.stdout + p.stderr)
        problems = {(n["report"], n["problem"]) for n in p.data["not_counted"]}
        self.assertEqual(problems, {(truncated, "invalid"), (other, "invalid"), (gone, "missing"), (empty_folder, "missing")})
        self.assertEqual(p.data["counts"]["reports"], 5, "a file named twice is read once")
        for name in (truncated, other, gone, empty_folder):
            self.assertIn(f"  {name}  ", p.stdout)
        self.assertIn("| missing |", p.md)

    def test_only_reports_not_counted_gives_21(self):
        p = self.aggregate(os.path.join(self.dir, "none.json"))
        self.assertEqual(p.returncode, 21, p.stdout + p.stderr)
        self.assertIn("Aggregate: FAILED (exit 21): no machine counted, 1 report not counted\n", p.stdout)

    @needs_probe
    def test_all_passed_is_0_and_a_newer_minor_version_counts(self):
        path, data = self.report("cpu.json", "--device", "cpu")
        newer = os.path.join(self.dir, "reports", "newer.json")
        with open(newer, "w") as f:  # what a later 1.x may add, e.g. one verdict per GPU
            json.dump({**data, "run_id": "f" * 16, "schema_version": "1.99", "devices": [{"index": 0}]}, f)
        p = self.aggregate(path, newer)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.data["counts"]["passed"], 2)
        self.assertTrue(p.md.startswith("### kernodeck aggregate: ✅ all 2 machines passed"), p.md)

    def test_needs_neither_libtorch_nor_the_worker(self):
        path, data = self.failing_report()
        alone = copy_alone(self, BUILD)  # no probe beside it: a check would say SUITE_INCOMPLETE (or TORCH_MISSING)
        p = self.aggregate(path, binary=alone, out=False)
        self.assertEqual(p.returncode, 20, p.stdout + p.stderr)
        self.assertIn(f"{data['code']} (exit {data['exit_code']})", p.stdout)

    def test_outputs_are_new_files_only(self):
        path, _ = self.failing_report()
        existing = os.path.join(self.dir, "existing.json")
        with open(existing, "w") as f:
            f.write("precious")
        p = subprocess.run([BIN, "aggregate", path, "--output", existing], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 12, p.stderr)
        self.assertIn("OUTPUT_WRITE_FAILED", p.stderr)
        self.assertEqual(p.stdout, "", "refused before reading anything")
        self.assertEqual(read(existing), "precious")
        md = os.path.join(self.dir, "summary.md")
        p = subprocess.run([BIN, "aggregate", path, "--summary-md", md, "--output", "/proc/kd-aggregate.json"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 12, p.stderr)
        self.assertFalse(os.path.exists(md), "a summary contradicting the exit code must not stay")

    def test_a_file_name_that_is_not_utf8(self):
        path, data = self.failing_report()
        odd = os.path.join(os.fsencode(self.dir), b"reports", b"node-\xff.json")
        os.rename(path, odd)
        p = self.aggregate(os.path.join(self.dir, "reports"))
        self.assertEqual(p.returncode, 20, p.stdout + p.stderr)
        self.assertEqual(p.data["failing"][0]["report"], os.path.join(self.dir, "reports", "node-\ufffd.json"))

    def test_usage_errors(self):
        for args, message in (((), "aggregate needs at least one report"),
                              (("x.json", "--device", "cpu"), "unknown argument '--device'"),
                              (("x.json", "--output"), "--output needs a value"),
                              (("x.json", "--output="), "--output needs a file name")):
            p = subprocess.run([BIN, "aggregate", *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(message, p.stderr)
        p = subprocess.run([BIN, "aggregate", "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertIn("Exit codes: 0 every machine passed", p.stdout)


if __name__ == "__main__":
    unittest.main()
