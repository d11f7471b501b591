"""Layer L4 (application) with the real binary on the CPU: the built-in workloads and their contracts."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import zipfile

from kd import BIN, BUILD, FULL, DiagnosticTest, expected_default_code, job_events, job_plan, needs_probe


@needs_probe
class AppLayer(DiagnosticTest):
    def test_layers_app_runs_the_fixed_check_then_l4(self):
        r = self.run_kd("--device", "cpu", "--layers", "app")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l for l in r.report["layers"]}
        self.assertEqual({k: v["status"] for k, v in layers.items()},
                         {"L1": "passed", "L2": "passed", "L3": "passed", "L4": "passed", "L5": "not_run",
                          "L6": "not_run", "L7": "not_run", "L8": "not_run"})
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
        self.assertEqual(layers["L4"]["status"], "passed")

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
        l4 = next(l for l in r.report["layers"] if l["id"] == "L4")
        self.assertEqual(next(t for t in l4["tests"] if t["name"] == "StopResume")["status"], "passed")

    def standby_job(self, go):
        """L4's batch job as the step starts a resumed run: ahead, on a plan in its private folder, waiting for its go."""
        folder = tempfile.mkdtemp(prefix="kd-resume-")
        self.addCleanup(shutil.rmtree, folder)
        plan = os.path.join(folder, "plan-test-1.json")
        with open(plan, "w") as f:
            json.dump(job_plan("batch_job", {"device": "cpu"}, job_folder=folder, standby=True), f)
        proc = subprocess.run([FULL, "--kd-plan", plan], input=go, capture_output=True, timeout=120)
        return proc, folder

    def test_a_resumed_run_started_ahead_touches_nothing_without_its_go(self):
        proc, folder = self.standby_job(b"")  # the step ended first: its end of the socket closed, no byte
        self.assertEqual(proc.returncode, 75, proc.stderr)
        self.assertEqual(job_events(proc.stdout), {})  # nothing done, nothing to say
        self.assertEqual(os.listdir(folder), ["plan-test-1.json"])

    def test_a_resumed_run_started_ahead_begins_on_its_go(self):
        proc, folder = self.standby_job(b"g")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(list(job_events(proc.stdout)), ["job_done"])
        with open(os.path.join(folder, "checkpoint.json")) as f:
            self.assertEqual(json.load(f)["batches_done"], 8)
        with open(os.path.join(folder, "records.jsonl")) as f:
            self.assertEqual(len(f.read().splitlines()), 64)

    def test_a_resumed_run_told_to_warm_up_still_waits_for_its_go(self):
        proc, folder = self.standby_job(b"w")  # warmed up, then the step ended: no go
        self.assertEqual(proc.returncode, 75, proc.stderr)
        self.assertEqual(os.listdir(folder), ["plan-test-1.json"])
        proc, folder = self.standby_job(b"wg")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(folder, "checkpoint.json")) as f:
            self.assertEqual(json.load(f)["batches_done"], 8)

    def test_l4_alone_runs_what_it_needs(self):
        r = self.run_kd("--device", "cpu", "--layers", "L4")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l["status"] for l in r.report["layers"]}
        self.assertEqual(layers, {"L1": "not_run", "L2": "not_run", "L3": "not_run", "L4": "passed", "L5": "not_run",
                                  "L6": "not_run", "L7": "not_run", "L8": "not_run"})
        self.assertTrue(r.report["execution"]["product_verified"])  # L3 ran as a prerequisite

    def test_full_runs_every_layer(self):
        r = self.run_kd("--device", "cpu", "--full", "--range-budget", "2")  # a short L5 sweep
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertTrue(all(l["status"] != "not_run" for l in r.report["layers"]))

    def test_a_failing_tiny_check_stops_l4(self):
        r = self.run_kd("--device", "cpu", "--layers", "app", "--inject-fault", "wrong-product")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L3.product")
        self.assertIsNone(r.report["app"])


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
MODEL = os.path.join(DATA, "tiny_model.pt")
SPEC = json.load(open(os.path.join(DATA, "tiny_spec.json")))
TINY_OUTPUTS = [{"name": "0", "tensor": True, "shape": [4, 3], "dtype": "Float", "device": "cpu"},
                {"name": "1", "tensor": True, "shape": [4], "dtype": "Float", "device": "cpu"}]


class ModelTest(DiagnosticTest):
    """Runs --model with tiny_spec.json (or a changed copy) and reads what came back."""

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

    def assertModelLoadFailed(self, r, which):
        self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.model_load")
        self.assertTrue(r.report["error"]["message"].startswith(which), r.report["error"]["message"])
        self.assertNotIn(self.dir, json.dumps(r.report))  # the model's path stays out of the report

    def assertBroken(self, r, rule, output):
        self.assertVerdict(r, "APP_CHECK_FAILED", 14, "L4.model_run")
        self.assertTrue(r.report["error"]["message"].startswith(f"rule '{rule}', {output}:"), r.report["error"]["message"])
        self.assertEqual(r.report["app"]["model"]["contract"], rule)


@needs_probe
class UserModel(ModelTest):
    def test_the_tiny_model_keeps_its_contract(self):
        r = self.run_model(MODEL)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["app"]["model"], {
            "format": "torchscript", "model": "TorchScript model, 27 parameter values (Float), device cpu",
            "input": "input: [4,8] Float, device cpu", "outputs": ["[4,3] Float", "[4] Float"], "contract": "passed",
            "signature": "forward(x: Tensor)", "output_list": TINY_OUTPUTS})
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
        self.assertEqual(r.report["error"]["message"],
                         "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 3x3) (operation: torch.mm)")

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


PACKAGE = os.path.join(DATA, "tiny_model_cpu.pt2")  # tests/data/make_tiny_model.py --aoti: the same function, for the CPU
REFERENCE_SPEC = os.path.join(DATA, "tiny_reference_spec.json")  # fixed inputs; output 0 as Python computed it


def rewrite_package(src, dst, change):
    """The package's entries rewritten by CHANGE(name, bytes) -> bytes, stored as PyTorch stores them."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, change(info.filename, zin.read(info)))
    return dst


@needs_probe
class AotiPackage(ModelTest):
    """An AOTInductor package (.pt2) through the same --input spec, markers and contract as TorchScript."""

    def assertCannotLoadPackages(self, r):
        """A LibTorch without the package loader (Debian's 1.13) says so and which one can."""
        self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.model_load")
        self.assertEqual(r.report["app"]["model"]["format"], "aoti_package")
        self.assertRegex(r.report["error"]["message"],
                         r"^this LibTorch \([0-9.]+\) cannot load AOTInductor packages \(\.pt2\): .*2\.11")

    def assertPackagePasses(self, r):
        if not BUILD.aoti_loader:
            return self.assertCannotLoadPackages(r)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["app"]["model"], {
            "format": "aoti_package", "model": "AOTInductor package (compiled for cpu), device cpu",
            "input": "input: [4,8] Float, device cpu", "outputs": ["[4,3] Float", "[4] Float"], "contract": "passed",
            "output_list": TINY_OUTPUTS})  # no signature: a package takes its inputs by position
        self.assertEqual([m["name"] for m in r.report["markers"]], ["read_parameters", "load_library", "load_weights",
                                                                    "prepare_data", "transfer", "compute", "write"])

    def test_the_tiny_package_keeps_its_contract(self):
        self.assertPackagePasses(self.run_model(PACKAGE))

    def test_both_formats_compute_what_python_computed(self):
        for model, kind in ((MODEL, "torchscript"), (PACKAGE, "aoti_package")):
            r = self.run_model(model, REFERENCE_SPEC)
            if kind == "aoti_package" and not BUILD.aoti_loader:
                self.assertCannotLoadPackages(r)
                continue
            self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
            ref = r.report["app"]["model"]["reference"]
            self.assertEqual((ref["vectors"], ref["dim"], ref["threshold"]), (4, 3, 0.9999))
            self.assertGreaterEqual(ref["min_cosine"], 0.9999)

    def test_the_format_comes_from_the_content_not_the_name(self):
        renamed = os.path.join(self.dir, "model.pt")
        shutil.copy(PACKAGE, renamed)
        self.assertPackagePasses(self.run_model(renamed))
        script = os.path.join(self.dir, "model.pt2")  # TorchScript under a package's name
        shutil.copy(MODEL, script)
        r = self.run_model(script)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["app"]["model"]["format"], "torchscript")

    def test_a_broken_contract_is_14(self):
        r = self.run_model(PACKAGE, self.spec(shapes=[[4, 3], [5]]))
        if not BUILD.aoti_loader:
            return self.assertCannotLoadPackages(r)
        self.assertBroken(r, "shape", "output 1")
        self.assertBroken(self.run_model(PACKAGE, self.spec(range=[-1.0, 1.0])), "finite", "output 1")

    def test_a_truncated_package_is_not_a_model(self):
        with open(PACKAGE, "rb") as f:
            data = f.read()
        path = os.path.join(self.dir, "model.pt2")
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        r = self.run_model(path)
        self.assertModelLoadFailed(r, "wrongly formatted: neither a TorchScript model nor an AOTInductor package: "
                                      "not a zip archive")
        self.assertEqual(r.report["app"]["model"]["format"], "unknown")

    def test_a_package_whose_compiled_model_is_corrupt(self):
        path = rewrite_package(PACKAGE, os.path.join(self.dir, "model.pt2"),
                               lambda name, data: b"\0" * len(data) if name.endswith(".so") else data)
        r = self.run_model(path)
        if not BUILD.aoti_loader:
            return self.assertCannotLoadPackages(r)
        self.assertModelLoadFailed(r, "wrongly formatted: an AOTInductor package that does not load: ")
        self.assertIn("does not load here", r.report["error"]["cause"])

    def test_a_package_for_another_device_type_names_both(self):
        """Without a GPU here, the package's own metadata is relabelled "cuda" (exactly what the loader reads to
        choose its runner) and run on the CPU; the real CPU package on cuda:0 runs in scripts/gpu-verify."""
        path = rewrite_package(PACKAGE, os.path.join(self.dir, "model.pt2"),
                               lambda name, data: data.replace(b'"AOTI_DEVICE_KEY": "cpu"', b'"AOTI_DEVICE_KEY": "cuda"')
                               if name.endswith("_metadata.json") else data)
        r = self.run_model(path)
        if not BUILD.aoti_loader:
            return self.assertCannotLoadPackages(r)
        self.assertModelLoadFailed(r, "compiled for another device: this AOTInductor package was compiled for cuda "
                                      "and this run asked for cpu (compile the package for cpu, or run with --device cuda)")
        self.assertIn("only on the device type", r.report["error"]["cause"])

    def test_the_cpu_package_on_cuda_gets_the_runs_real_verdict(self):
        r = self.run_kd("--device", "cuda", "--model", PACKAGE, "--input", self.spec())
        code, exit_code = expected_default_code()
        if exit_code != 0:  # L2 stops first: no GPU here (6), or no GPU backend in the build (5)
            self.assertVerdict(r, code, exit_code)
            self.assertEqual(r.report["app"], None)
        elif not BUILD.aoti_loader:
            self.assertCannotLoadPackages(r)
        else:
            self.assertModelLoadFailed(r, "compiled for another device: this AOTInductor package was compiled for cpu "
                                          "and this run asked for cuda:0")


if __name__ == "__main__":
    unittest.main()


DICT_MODEL = os.path.join(DATA, "dict_model.pt")  # make_named_models.py: {"pooled", "hidden"} from (input_ids, attention_mask)
NESTED_MODEL = os.path.join(DATA, "nested_model.pt")  # ({"logits", "probs"}, [sum], 7, "v1")
ENCODER_INPUTS = [{"name": "input_ids", "shape": [2, 5], "dtype": "int64", "range": [0, 31]},
                  {"name": "attention_mask", "shape": [2, 5], "dtype": "float32", "range": [1, 1]}]


@needs_probe
class NamedOutputs(ModelTest):
    """Models that return dicts and nested tuples, specs that name inputs and outputs (make_named_models.py)."""

    def write_spec(self, inputs, outputs):
        path = os.path.join(self.dir, "spec.json")
        with open(path, "w") as f:
            json.dump({"inputs": inputs, "outputs": outputs}, f)
        return path

    def test_a_dict_output_keeps_a_contract_by_name(self):
        spec = self.write_spec(ENCODER_INPUTS, {"count": 2, "shapes": {"pooled": [2, 8], "hidden": [2, 5, 8]},
                                                "finite": {"hidden": True}})
        r = self.run_model(DICT_MODEL, spec)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        model = r.report["app"]["model"]
        self.assertEqual(model["output_list"], [
            {"name": "pooled", "tensor": True, "shape": [2, 8], "dtype": "Float", "device": "cpu"},
            {"name": "hidden", "tensor": True, "shape": [2, 5, 8], "dtype": "Float", "device": "cpu"}])
        self.assertEqual(model["signature"], "forward(input_ids: Tensor, attention_mask: Tensor)")
        self.assertEqual(model["contract"], "passed")

    def test_a_broken_rule_names_the_output(self):
        spec = self.write_spec(ENCODER_INPUTS, {"shapes": {"hidden": [2, 8]}})
        r = self.run_model(DICT_MODEL, spec)
        self.assertBroken(r, "shape", "output 'hidden'")
        self.assertEqual(r.report["error"]["message"],
                         "rule 'shape', output 'hidden': output 'hidden' has shape [2,5,8], the contract says [2,8]")
        r = self.run_model(DICT_MODEL, self.write_spec(ENCODER_INPUTS, {"shapes": {"logits": [2, 8]}}))
        self.assertBroken(r, "name", "output 'logits'")
        self.assertIn("the model returned 2 outputs: pooled, hidden", r.report["error"]["message"])

    def test_inputs_go_by_keyword_in_any_order(self):
        r = self.run_model(DICT_MODEL, self.write_spec(ENCODER_INPUTS[::-1], {"shapes": {"hidden": [2, 5, 8]}}))
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)

    def test_a_spec_whose_names_do_not_match_forward(self):
        inputs = [dict(ENCODER_INPUTS[0]), dict(ENCODER_INPUTS[1], name="mask")]
        r = self.run_model(DICT_MODEL, self.write_spec(inputs, {}))
        self.assertBroken(r, "inputs", "input 'mask'")
        self.assertEqual(r.report["error"]["message"], "rule 'inputs', input 'mask': forward(input_ids: Tensor, "
                                                       "attention_mask: Tensor) has no parameter 'mask'")
        self.assertNotIn("compute", [m["name"] for m in r.report["markers"]])  # checked before anything ran
        r = self.run_model(DICT_MODEL, self.write_spec(ENCODER_INPUTS[:1], {}))
        self.assertBroken(r, "inputs", "parameter 'attention_mask'")
        twice = [ENCODER_INPUTS[0], dict(ENCODER_INPUTS[1], name="input_ids")]
        r = self.run_kd("--device", "cpu", "--model", DICT_MODEL, "--input", self.write_spec(twice, {}))
        self.assertEqual(r.rc, 2)  # fits no model: the supervisor refuses the spec before anything runs
        self.assertIn("--input: inputs[1].name 'input_ids' repeats inputs[0].name", r.stderr)

    def test_a_packages_outputs_are_named_from_its_call_spec(self):
        """The same encoder as an AOTInductor package (make_named_models.py --aoti): its dict's keys name the outputs."""
        spec = self.write_spec(ENCODER_INPUTS, {"count": 2, "shapes": {"pooled": [2, 8], "hidden": [2, 5, 8]}})
        r = self.run_model(os.path.join(DATA, "dict_model_cpu.pt2"), spec)
        if not BUILD.aoti_loader:
            self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.model_load")  # Debian's 1.13: no package loader
            return
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual([(o["name"], o["shape"]) for o in r.report["app"]["model"]["output_list"]],
                         [("pooled", [2, 8]), ("hidden", [2, 5, 8])])
        r = self.run_model(os.path.join(DATA, "dict_model_cpu.pt2"), self.write_spec(ENCODER_INPUTS, {"shapes": {"hidden": [2, 8]}}))
        self.assertBroken(r, "shape", "output 'hidden'")

    def test_nested_outputs_are_flattened_with_names(self):
        spec = self.write_spec([{"name": "x", "shape": [3, 4]}],
                               {"count": 5, "shapes": {"0.logits": [3, 3], "1.0": [3]}, "finite": True})
        r = self.run_model(NESTED_MODEL, spec)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)  # the int and the string are reported, and fail nothing
        self.assertEqual([(o["name"], o["tensor"], o["dtype"]) for o in r.report["app"]["model"]["output_list"]],
                         [("0.logits", True, "Float"), ("0.probs", True, "Float"), ("1.0", True, "Float"),
                          ("2", False, "Int"), ("3", False, "String")])
        r = self.run_model(NESTED_MODEL, self.write_spec([{"name": "x", "shape": [3, 4]}], {"shapes": {"3": [1]}}))
        self.assertBroken(r, "type", "output '3'")  # a shape asks for a tensor there

    def test_an_out_of_range_index_names_the_cpu_error(self):
        inputs = [dict(ENCODER_INPUTS[0], range=[0, 40]), ENCODER_INPUTS[1]]  # a vocabulary of 32
        r = self.run_model(DICT_MODEL, self.write_spec(inputs, {}))
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L4.model_run")
        self.assertEqual(r.report["error"]["message"], "RuntimeError: index out of range in self (operation: torch.embedding)")

    def test_a_device_side_assert_is_rerun_on_the_cpu_in_a_fresh_process(self):
        """TEST ONLY: --inject-fault device-assert makes the run read as a GPU's device-side assert (no GPU here);
        the CPU re-run that follows is real: a fresh process running the same model on the same input."""
        inputs = [dict(ENCODER_INPUTS[0], range=[0, 40]), ENCODER_INPUTS[1]]
        r = self.run_kd("--device", "cpu", "--model", DICT_MODEL, "--input", self.write_spec(inputs, {}),
                        "--inject-fault", "device-assert")
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L4.model_run")
        cpu = "RuntimeError: index out of range in self (operation: torch.embedding)"
        self.assertTrue(r.report["error"]["message"].startswith("CUDA error: device-side assert triggered"))
        self.assertTrue(r.report["error"]["message"].endswith("; on the CPU, in a fresh process: " + cpu))
        self.assertIn("index out of range", r.report["error"]["cause"])
        self.assertIn("vocabulary size", r.report["error"]["next_action"])
        da = r.report["app"]["model"]["device_assert"]
        self.assertEqual((da["cpu_rerun"], da["cpu_error"]), ("failed", cpu))
        self.assertIn("CUDA context unusable", da["gpu_process"])
        # In range, the CPU runs it: then the fault is the GPU's own, and the report says the CPU had none.
        r = self.run_kd("--device", "cpu", "--model", DICT_MODEL, "--input", self.write_spec(ENCODER_INPUTS, {}),
                        "--inject-fault", "device-assert")
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L4.model_run")
        self.assertEqual((r.report["app"]["model"]["device_assert"]["cpu_rerun"],
                          r.report["app"]["model"]["device_assert"]["cpu_error"]), ("ran without error", None))
        self.assertTrue(r.report["error"]["message"].endswith("the same model and input on the CPU, in a fresh process, "
                                                              "ran without error"))
