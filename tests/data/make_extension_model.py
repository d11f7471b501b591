"""Regenerates extension_model.pt: a TorchScript model that calls a custom operator, kd_test::fused_gelu,
from the test extension tests/extensions/fused_gelu.cpp, so --extension has an application's shape of problem:
the model loads only once that library has registered the operator.

    python tests/data/make_extension_model.py build/tests/extensions/libkd_ext_fused_gelu.so tests/data/extension_model.pt

(any Python whose torch matches the LibTorch the library was built against, e.g. .deps/torch-venv/bin/python).
forward(x: [N, 8] float32) returns fused_gelu(x @ W) * 2: [N, 3] (extension_spec.json is its contract).
"""
import sys

import torch


class UsesExtension(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(-1, 1, 24).reshape(8, 3))

    def forward(self, x: torch.Tensor):
        return torch.ops.kd_test.fused_gelu(x @ self.w) * 2


if __name__ == "__main__":
    torch.ops.load_library(sys.argv[1])
    torch.jit.save(torch.jit.script(UsesExtension()), sys.argv[2] if len(sys.argv) > 2 else "extension_model.pt")
