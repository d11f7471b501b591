"""Regenerates tiny_model.pt, the TorchScript test model of layer L4 (--model), deterministically.

Run with any Python that has torch (e.g. the private one: .deps/torch-venv/bin/python):
    python tests/data/make_tiny_model.py tests/data/tiny_model.pt
forward(x: [N, 8] float32) returns (tanh(x @ W + b): [N, 3], log(x).sum(1): [N]); the second output
is finite only for positive inputs, so a spec's value range decides whether the "finite" rule holds.
"""
import sys

import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(4)
        self.proj = torch.nn.Linear(8, 3)
        with torch.no_grad():
            self.proj.weight.copy_(torch.rand(3, 8, generator=g) - 0.5)
            self.proj.bias.copy_(torch.rand(3, generator=g) - 0.5)
        self.drop = torch.nn.Dropout(0.5)  # saved in train mode: the diagnostic must call eval()

    def forward(self, x: torch.Tensor):
        return torch.tanh(self.proj(self.drop(x))), torch.log(x).sum(1)


if __name__ == "__main__":
    torch.jit.save(torch.jit.script(Tiny()), sys.argv[1] if len(sys.argv) > 1 else "tiny_model.pt")
