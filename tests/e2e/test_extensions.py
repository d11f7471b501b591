"""--extension and L4's explanations of the application's own failures, with the real binary on the CPU: custom-operator
libraries built against this build's LibTorch (tests/extensions/), a model that calls their operator, precision mismatches,
and, on a GPU, an input the spec keeps on the host."""
import json
import os
import shutil
import stat
import unittest

from kd import BUILD, BACKEND, DiagnosticTest, machine_has_gpu, needs_probe

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
MODEL = os.path.join(DATA, "extension_model.pt")
SPEC = os.path.join(DATA, "extension_spec.json")
with open(os.path.join(DATA, "tiny_spec.json")) as f:
    TINY_SPEC = json.load(f)
EXT_DIR = json.load(open(os.environ["KD_BUILD_INFO"])).get("extensions_dir", "")
FUSED = os.path.join(EXT_DIR, "libkd_ext_fused_gelu.so")
BROKEN = os.path.join(EXT_DIR, "libkd_ext_missing_symbol.so")
# fused_gelu.cpp built against the pip LibTorch 2.11 (tests/extensions/prebuilt/rebuild), for the other configurations.
PREBUILT = os.path.join(DATA, "..", "extensions", "prebuilt", "libkd_ext_fused_gelu-2.11.so")


class ExtensionTest(DiagnosticTest):
    def setUp(self):
        super().setUp()
        for lib in (FUSED, BROKEN):  # built with the tests (ctest builds everything); never a silent pass without them
            self.assertTrue(os.path.exists(lib), f"{lib} is not built: build the kd_ext_* targets")

    def run_cpu(self, *args):
        return self.run_kd("--device", "cpu", *args)

    def assertNoPaths(self, r):
        text = json.dumps(r.report)
        for folder in (self.dir, EXT_DIR, DATA):
            self.assertNotIn(folder, text)

    def assertLoadFailed(self, r, stage, message, cause):
        self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, stage)
        self.assertEqual(r.report["error"]["message"], message)
        self.assertIn(cause, r.report["error"]["cause"])
        self.assertIn(f"cause: {r.report['error']['cause']}", r.stdout)  # the terminal says it too
        self.assertIn(r.report["error"]["next_action"], r.stdout)
        self.assertNoPaths(r)


@needs_probe
class Extensions(ExtensionTest):
    def test_the_model_runs_with_its_extension(self):
        r = self.run_cpu("--extension", FUSED, "--model", MODEL, "--input", SPEC)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["app"]["extensions"], [{"library": "libkd_ext_fused_gelu.so", "loaded": True,
                                                          "operators": ["kd_test::fused_gelu"], "operator_count": 1}])
        self.assertEqual(r.report["app"]["model"]["outputs"], ["[4,3] Float"])
        self.assertEqual(r.report["requested"]["extensions"], 1)
        l4 = next(l for l in r.report["layers"] if l["id"] == "L4")
        self.assertEqual(next(t for t in l4["tests"] if t["name"] == "ExtensionLoad")["status"], "passed")
        self.assertNoPaths(r)

    def test_an_extension_alone_is_loaded_and_listed(self):
        r = self.run_cpu("--extension", FUSED)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["requested"]["layers"], ["L1", "L2", "L3", "L4"])
        self.assertEqual(r.report["app"]["extensions"][0]["operators"], ["kd_test::fused_gelu"])

    def test_without_its_extension_the_model_names_the_operator(self):
        r = self.run_cpu("--model", MODEL, "--input", SPEC)
        self.assertLoadFailed(r, "L4.model_load",
                              "operator `kd_test::fused_gelu` is not registered: load its extension with --extension",
                              "custom operator that no loaded library registered")
        self.assertIn("--extension", r.report["error"]["next_action"])

    def test_a_missing_symbol_names_the_symbol_and_the_cause(self):
        r = self.run_cpu("--extension", BROKEN, "--model", MODEL, "--input", SPEC)
        self.assertLoadFailed(r, "L4.extension_load",
                              "extension 'libkd_ext_missing_symbol.so' does not load: undefined symbol "
                              "`c10::detail::kd_symbol_of_another_libtorch(int)` (LibTorch's: built against another "
                              "LibTorch version)", "built against another LibTorch")
        self.assertEqual(r.report["app"]["extensions"], [{"library": "libkd_ext_missing_symbol.so", "loaded": False,
                                                          "operators": []}])
        self.assertNotIn("model", r.report["app"])  # the model is not loaded after a failed extension

    def test_the_first_failing_library_decides(self):
        r = self.run_cpu("--extension", FUSED, "--extension", BROKEN)
        self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.extension_load")
        self.assertEqual([(e["library"], e["loaded"]) for e in r.report["app"]["extensions"]],
                         [("libkd_ext_fused_gelu.so", True), ("libkd_ext_missing_symbol.so", False)])
        self.assertEqual(r.report["requested"]["extensions"], 2)

    def test_a_missing_library(self):
        r = self.run_cpu("--extension", os.path.join(self.dir, "libnone.so"))
        self.assertLoadFailed(r, "L4.extension_load", "extension 'libnone.so' is missing: no such file or directory",
                              "no file at the path")

    def test_a_library_that_registers_no_operator(self):
        plain = os.path.join(self.dir, "libplain.so")
        shutil.copy(BUILD.probe, plain)  # a LibTorch library of this build with no TORCH_LIBRARY block
        r = self.run_cpu("--extension", plain)
        self.assertLoadFailed(r, "L4.extension_load", "extension 'libplain.so' registers no operator (no TORCH_LIBRARY "
                              "block ran, or it was loaded already)", "registered no operator")

    def test_an_extension_built_for_libtorch_2_11(self):
        r = self.run_cpu("--extension", PREBUILT)
        if BUILD.torch_version.startswith("2.11."):  # its own LibTorch: it loads and registers its operator
            self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
            self.assertEqual(r.report["app"]["extensions"][0]["operators"], ["kd_test::fused_gelu"])
            return
        self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.extension_load")  # e.g. Debian's 1.13
        self.assertTrue(r.report["error"]["message"].startswith(
            "extension 'libkd_ext_fused_gelu-2.11.so' does not load: "), r.report["error"]["message"])
        self.assertRegex(r.report["error"]["cause"], "another LibTorch|other C\\+\\+ ABI|GPU build of LibTorch")
        self.assertNoPaths(r)

    def test_the_bundle_keeps_the_option_without_the_path(self):
        bundle = os.path.join(self.dir, "bundle")
        r = self.run_cpu("--extension", FUSED, "--bundle", bundle)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        with open(os.path.join(bundle, "command.json")) as f:
            args = json.load(f)["arguments"]
        self.assertEqual(args[args.index("--extension") + 1], "<file>")
        self.assertNotIn(EXT_DIR, json.dumps(args))


@needs_probe
class ApplicationSignatures(ExtensionTest):
    def spec(self, **input_changes):
        spec = json.loads(json.dumps(TINY_SPEC))
        spec["inputs"][0].update(input_changes)
        path = os.path.join(self.dir, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        return path

    def test_a_precision_mismatch_is_explained(self):
        # float16 inputs into tiny_model.pt's float32 Linear: LibTorch's dtype error, kept whole, with its cause.
        r = self.run_cpu("--model", os.path.join(DATA, "tiny_model.pt"), "--input", self.spec(dtype="float16"))
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L4.model_run")
        self.assertRegex(r.report["error"]["message"], "dtype|scalar type")  # 2.11 and 1.13 word it differently
        self.assertIn("two precisions", r.report["error"]["cause"])
        self.assertIn("dtype", r.report["error"]["next_action"])

    def test_an_input_kept_on_the_host_in_a_cpu_run(self):
        r = self.run_cpu("--model", os.path.join(DATA, "tiny_model.pt"), "--input", self.spec(device="cpu"))
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["app"]["model"]["input"], "input: [4,8] Float, device cpu")

    @unittest.skipUnless(BACKEND == "cuda" and machine_has_gpu(), "needs a GPU: a CPU run has one device only")
    def test_an_input_left_on_the_cpu_is_a_device_mismatch_on_the_gpu(self):
        r = self.run_kd("--model", os.path.join(DATA, "tiny_model.pt"), "--input", self.spec(device="cpu"))
        self.assertVerdict(r, "RUNTIME_ERROR", 9, "L4.model_run")
        self.assertIn("Expected all tensors to be on the same device", r.report["error"]["message"])
        self.assertIn("an input left on the CPU", r.report["error"]["cause"])
        self.assertEqual(r.report["app"]["model"]["input"], "input: [4,8] Float (kept on cpu), device cuda:0")

    def test_a_model_file_without_read_permission(self):
        if os.geteuid() == 0:
            self.skipTest("running as root: a file without permissions is still readable (the hint is unit-tested)")
        model = os.path.join(self.dir, "model.pt")
        shutil.copy(os.path.join(DATA, "tiny_model.pt"), model)
        os.chmod(model, 0)
        r = self.run_cpu("--model", model, "--input", self.spec())
        self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.model_load")
        self.assertIn("Permission denied", r.report["error"]["message"])
        self.assertIn("may not read it", r.report["error"]["cause"])
