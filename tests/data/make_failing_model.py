"""Regenerates failing_model.pt: a TorchScript model that loads but fails when it runs (its
forward multiplies a [N, 8] input by a 3x3 matrix), so L4 must name the interpreter's real error.

    python tests/data/make_failing_model.py tests/data/failing_model.pt   (any Python with torch)
"""
import sys

import torch


class Failing(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        return torch.mm(x, torch.ones(3, 3))


if __name__ == "__main__":
    torch.jit.save(torch.jit.script(Failing()), sys.argv[1] if len(sys.argv) > 1 else "failing_model.pt")
