"""Regenerates the test models of L4's named outputs and inputs (tests/e2e/test_app.py), deterministically:

    python tests/data/make_named_models.py tests/data     (any Python with torch, e.g. .deps/torch-venv/bin/python)
    python tests/data/make_named_models.py --aoti tests/data/dict_model_cpu.pt2   (torch >= 2.6, a C++ compiler)

dict_model.pt: the shape of an exported transformer encoder. forward(input_ids: [B, T] int64, attention_mask:
[B, T] float32) embeds the ids (a vocabulary of 32) and returns {"hidden": [B, T, 8], "pooled": [B, 8]}; an id
of 32 or more is out of range (on the CPU: "index out of range in self"; on a GPU: a device-side assert).
dict_model_cpu.pt2: the same encoder as an AOTInductor package for the CPU, for inputs [2, 5] (static shapes):
its outputs are named from the package's call spec, as TorchScript's are from the dict.
nested_model.pt: forward(x: [N, 4]) returns ({"logits": [N, 3], "probs": [N, 3]}, [x.sum(1)], 7, "v1"): a
tuple holding a dict, a list, an int and a string, whose leaves are 0.logits, 0.probs, 1.0, 2 and 3.
"""
import os
import sys
from typing import Dict, List, Tuple

import torch


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(20)
        self.embed = torch.nn.Embedding(32, 8)
        with torch.no_grad():
            self.embed.weight.copy_(torch.rand(32, 8, generator=g) - 0.5)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Dict[str, torch.Tensor]:
        hidden = self.embed(input_ids) * attention_mask.unsqueeze(-1)
        pooled = hidden.sum(1) / attention_mask.sum(1, keepdim=True).clamp(min=1.0)
        return {"pooled": pooled, "hidden": hidden}


class Nested(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(21)
        self.proj = torch.nn.Linear(4, 3)
        with torch.no_grad():
            self.proj.weight.copy_(torch.rand(3, 4, generator=g) - 0.5)
            self.proj.bias.zero_()

    def forward(self, x: torch.Tensor) -> Tuple[Dict[str, torch.Tensor], List[torch.Tensor], int, str]:
        logits = self.proj(x)
        return {"logits": logits, "probs": torch.softmax(logits, 1)}, [x.sum(1)], 7, "v1"


def save_aoti(path):
    import tempfile
    from make_tiny_model import portable_host_code  # the same portable build as tiny_model_cpu.pt2
    with tempfile.TemporaryDirectory() as tmp:
        portable_host_code(tmp)
        import torch._inductor  # after CXX is set: Inductor's config reads it on import

        ids = torch.randint(0, 32, (2, 5), generator=torch.Generator().manual_seed(7))
        mask = torch.ones(2, 5)
        with torch.no_grad():
            exported = torch.export.export(Encoder().eval(), (ids, mask))
        torch._inductor.aoti_compile_and_package(exported, package_path=os.path.abspath(path))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--aoti"]:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        save_aoti(sys.argv[2])
        sys.exit(0)
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, module in (("dict_model.pt", Encoder()), ("nested_model.pt", Nested())):
        path = os.path.join(folder, name)
        torch.jit.save(torch.jit.script(module.eval()), path)
        print(path, os.path.getsize(path), "bytes", file=sys.stderr)
