"""Layer L4 (application) with the real binary on the CPU: the built-in workloads and their contracts."""
import json
import os
import unittest

from kd import DiagnosticTest, needs_probe


@needs_probe
class AppLayer(DiagnosticTest):
    def test_layers_app_runs_the_fixed_check_then_l4(self):
        r = self.run_kd("--device", "cpu", "--layers", "app")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l for l in r.report["layers"]}
        self.assertEqual({k: v["status"] for k, v in layers.items()},
                         {"L1": "passed", "L2": "passed", "L3": "passed", "L4": "passed", "L5": "not_run", "L6": "not_run"})
        self.assertEqual(r.report["requested"]["layers"], ["L1", "L2", "L3", "L4"])
        emb = r.report["app"]["embeddings"]
        self.assertEqual((emb["count"], emb["dim"], emb["contract"]), (8, 16, "passed"))
        self.assertTrue(emb["eval_mode"] and emb["inference_mode"])
        self.assertTrue(emb["cpu_reference"]["within"] and emb["batch_size_change"]["within"])
        self.assertEqual(emb["input"], "8 sequences, max length 64, int64 tokens, batch 4 (and 3), device cpu")
        tr = r.report["app"]["training"]
        self.assertEqual((tr["trainable_changed"], tr["trainable_total"]), (2, 2))
        self.assertEqual((tr["frozen_changed"], tr["frozen_total"]), (0, 1))
        self.assertTrue(tr["eval_without_dropout"] and tr["train_mode_restored"] and tr["state_identical"])
        self.assertGreater(tr["state_bytes"], 0)
        self.assertIn("[       OK ] L4_App.Embeddings", r.stdout)

    def test_stop_and_resume_keeps_every_id_once(self):
        r = self.run_kd("--device", "cpu", "--layers", "app")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        sr = r.report["app"]["stop_resume"]
        self.assertEqual((sr["items"], sr["batch_size"], sr["batches"], sr["contract"]), (64, 8, 8, "passed"))
        term, kill, last = sr["runs"]
        # SIGTERM really reached the job mid-run: it finished the batch in progress, committed, exited 75.
        self.assertEqual((term["signal"], term["started_at"], term["exit"], term["uncommitted_bytes"]),
                         ("SIGTERM", 0, "exit status 75", 0))
        self.assertTrue(3 <= term["sent_after"] and term["ended_at"] == term["sent_after"] + 1 < 8)
        # SIGKILL while a later batch's records were on disk but not committed: the resume cuts them off.
        self.assertEqual((kill["signal"], kill["started_at"], kill["exit"]), ("SIGKILL", term["ended_at"], "killed by signal 9"))
        self.assertTrue(5 <= kill["sent_after"] == kill["ended_at"] < 8)
        self.assertGreater(kill["uncommitted_bytes"], 0)
        self.assertEqual((last["signal"], last["started_at"], last["ended_at"], last["exit"], last["uncommitted_bytes"]),
                         (None, kill["ended_at"], 8, "exit status 0", 0))
        self.assertIn("[       OK ] L4_App.StopResume", r.stdout)

    def test_l4_alone_runs_what_it_needs(self):
        r = self.run_kd("--device", "cpu", "--layers", "L4")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l["status"] for l in r.report["layers"]}
        self.assertEqual(layers, {"L1": "not_run", "L2": "not_run", "L3": "not_run", "L4": "passed", "L5": "not_run", "L6": "not_run"})
        self.assertTrue(r.report["execution"]["product_verified"])  # L3 ran as a prerequisite

    def test_full_runs_every_layer(self):
        r = self.run_kd("--device", "cpu", "--full", "--range-budget", "2")  # a short L5 sweep
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertTrue(all(l["status"] != "not_run" for l in r.report["layers"]))

    def test_a_failing_tiny_check_stops_l4(self):
        r = self.run_kd("--device", "cpu", "--layers", "app", "--inject-fault", "wrong-product")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L3.product")
        self.assertIsNone(r.report["app"])


if __name__ == "__main__":
    unittest.main()


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
MODEL = os.path.join(DATA, "tiny_model.pt")
SPEC = json.load(open(os.path.join(DATA, "tiny_spec.json")))


@needs_probe
class UserModel(DiagnosticTest):
    def spec(self, **changes):
        """tiny_spec.json with parts replaced, written to this test's folder."""
        spec = json.loads(json.dumps(SPEC))
        for key, value in changes.items():
            (spec["inputs"][0] if key == "range" else spec["outputs"])[key] = value
        path = os.path.join(self.dir, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        return path

    def run_model(self, model, spec=None):
        return self.run_kd("--device", "cpu", "--model", model, "--input", spec or self.spec())

    def test_the_tiny_model_keeps_its_contract(self):
        r = self.run_model(MODEL)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["app"]["model"], {
            "model": "TorchScript model, 27 parameter values (Float), device cpu",
            "input": "input: [4,8] Float, device cpu", "outputs": ["[4,3] Float", "[4] Float"], "contract": "passed"})
        self.assertEqual(r.report["requested"]["layers"], ["L1", "L2", "L3", "L4"])
        self.assertTrue(r.report["requested"]["model"])
        # Every step finished, in order, each marked once after it, at non-decreasing times.
        markers = r.report["markers"]
        self.assertEqual([m["name"] for m in markers], ["read_parameters", "load_library", "load_weights",
                                                        "prepare_data", "transfer", "compute", "write"])
        self.assertEqual([m["stage"] for m in markers][2:], ["L4.model_load"] + ["L4.model_run"] * 4)
        times = [m["t_ms"] for m in markers]
        self.assertEqual(times, sorted(times))

    def test_a_failed_load_marks_nothing_after_the_library(self):
        r = self.run_model(os.path.join(self.dir, "none.pt"))
        self.assertEqual([m["name"] for m in r.report["markers"]], ["read_parameters", "load_library"])

    def test_a_model_failing_at_run_time_names_the_interpreters_error(self):
        r = self.run_model(os.path.join(DATA, "failing_model.pt"))
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L4.model_run")
        # TorchScript's first line only says that the interpreter failed; the report carries why.
        self.assertEqual(r.report["error"]["message"], "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 3x3)")

    def assertModelLoadFailed(self, r, which):
        self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.model_load")
        self.assertTrue(r.report["error"]["message"].startswith(which), r.report["error"]["message"])
        self.assertNotIn(self.dir, json.dumps(r.report))  # the model's path stays out of the report

    def test_missing_model(self):
        self.assertModelLoadFailed(self.run_model(os.path.join(self.dir, "none.pt")), "missing")

    def test_unreadable_model(self):
        os.mkdir(os.path.join(self.dir, "model.pt"))  # a folder: unreadable as a file, also for root
        self.assertModelLoadFailed(self.run_model(os.path.join(self.dir, "model.pt")), "unreadable")

    def test_wrongly_formatted_model(self):
        path = os.path.join(self.dir, "model.pt")
        with open(path, "w") as f:
            f.write("not a model\n")
        r = self.run_model(path)
        self.assertModelLoadFailed(r, "wrongly formatted")
        self.assertIn("TorchScript", r.report["error"]["cause"])

    def assertBroken(self, r, rule, output):
        self.assertVerdict(r, "APP_CHECK_FAILED", 14, "L4.model_run")
        self.assertTrue(r.report["error"]["message"].startswith(f"rule '{rule}', {output}:"), r.report["error"]["message"])
        self.assertEqual(r.report["app"]["model"]["contract"], rule)

    def test_each_broken_contract_rule(self):
        self.assertBroken(self.run_model(MODEL, self.spec(count=3)), "count", "all")
        self.assertBroken(self.run_model(MODEL, self.spec(shapes=[[4, 2], [4]])), "shape", "output 0")
        self.assertBroken(self.run_model(MODEL, self.spec(range=[-1.0, 1.0])), "finite", "output 1")  # log(x < 0)

    def test_a_bad_spec_is_a_usage_error(self):
        path = os.path.join(self.dir, "bad.json")
        with open(path, "w") as f:
            f.write('{"inputs": []}')
        r = self.run_kd("--device", "cpu", "--model", MODEL, "--input", path)
        self.assertEqual(r.rc, 2)
        self.assertIn("--input: 'inputs' must be a list", r.stderr)
        r = self.run_kd("--device", "cpu", "--input", path)
        self.assertEqual(r.rc, 2)
        self.assertIn("--model and --input go together", r.stderr)
