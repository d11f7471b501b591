"""Regenerates the test models of L4's named outputs and inputs (tests/e2e/test_app.py), deterministically:

    python tests/data/make_named_models.py tests/data     (any Python with torch, e.g. .deps/torch-venv/bin/python)

dict_model.pt: the shape of an exported transformer encoder. forward(input_ids: [B, T] int64, attention_mask:
[B, T] float32) embeds the ids (a vocabulary of 32) and returns {"hidden": [B, T, 8], "pooled": [B, 8]}; an id
of 32 or more is out of range (on the CPU: "index out of range in self"; on a GPU: a device-side assert).
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


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, module in (("dict_model.pt", Encoder()), ("nested_model.pt", Nested())):
        path = os.path.join(folder, name)
        torch.jit.save(torch.jit.script(module.eval()), path)
        print(path, os.path.getsize(path), "bytes", file=sys.stderr)
