"""Regenerates the test models of layer L4 (--model), deterministically: tiny_model.pt (TorchScript) and,
with --aoti, the same function as an AOTInductor package (.pt2) compiled for one device type.

Run with any Python that has torch (e.g. the private one: .deps/torch-venv/bin/python):
    python tests/data/make_tiny_model.py tests/data/tiny_model.pt
    python tests/data/make_tiny_model.py --aoti tests/data/tiny_model_cpu.pt2            (torch >= 2.6, a C++ compiler)
    python tests/data/make_tiny_model.py --aoti tiny_model_cuda.pt2 --device cuda      (on a GPU machine, with nvcc)
    python tests/data/make_tiny_model.py --reference tests/data/tiny_reference_spec.json
The last writes a spec with fixed input values and, beside it, tiny_reference.json: output 0 computed here, in
eval mode, so that --model shows that a file (either format, on any device) computes this very function.
forward(x: [N, 8] float32) returns (tanh(x @ W + b): [N, 3], log(x).sum(1): [N]); the second output
is finite only for positive inputs, so a spec's value range decides whether the "finite" rule holds.
The package is exported in eval mode for x: [4, 8] (static shapes), the shape of tiny_spec.json.
"""
import argparse
import json
import os
import stat
import sys
import tempfile

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


def portable_host_code(folder):
    """Inductor compiles a package's host code with -march=native and vectorizes for this CPU's best ISA
    (AVX-512, AMX...): a package committed as test data must run on any x86-64 CI machine, so the compiler
    gets a baseline target instead, and vectorization follows ATEN_CPU_CAPABILITY=default (none). The
    link also drops the symbol table (-s; the exported symbols stay), which keeps the test data small."""
    wrapper = os.path.join(folder, "portable-g++")  # the name must say g++: Inductor picks flags by it
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nfor a; do shift; [ "$a" = -march=native ] && a=-march=x86-64-v2; set -- "$@" "$a"; done\n'
                'case " $* " in *" -shared "*) set -- "$@" -s;; esac\n'
                'exec g++ "$@"\n')
    os.chmod(wrapper, stat.S_IRWXU)
    os.environ["CXX"] = wrapper
    os.environ["ATEN_CPU_CAPABILITY"] = "default"


def save_aoti(path, device):
    with tempfile.TemporaryDirectory() as tmp:
        portable_host_code(tmp)
        import torch._inductor  # after CXX is set: Inductor's config reads it on import

        model = Tiny().eval().to(device)
        x = (torch.rand(4, 8, generator=torch.Generator().manual_seed(5)) + 0.5).to(device)
        with torch.no_grad():
            exported = torch.export.export(model, (x,))
        torch._inductor.aoti_compile_and_package(exported, package_path=os.path.abspath(path))


def save_reference(spec_path):
    x = torch.rand(4, 8, generator=torch.Generator().manual_seed(6), dtype=torch.float64).float() * 1.5 + 0.5
    with torch.no_grad():
        out = Tiny().eval()(x)[0]
    folder = os.path.dirname(os.path.abspath(spec_path))
    with open(os.path.join(folder, "tiny_reference.json"), "w") as f:
        json.dump({"comment": "output 0 of the tiny model on tiny_reference_spec.json's input (make_tiny_model.py)",
                   "embeddings": [[round(v, 9) for v in row] for row in out.tolist()]}, f, indent=1)
        f.write("\n")
    spec = {"comment": "The tiny model's contract with fixed inputs and Python's output 0 as the reference",
            "inputs": [{"name": "x", "shape": [4, 8], "dtype": "float32",
                        "values": [round(v, 9) for v in x.flatten().tolist()]}],
            "outputs": {"count": 2, "shapes": [[4, 3], [4]], "finite": True,
                        "reference": {"file": "tiny_reference.json", "min_cosine": 0.9999}}}
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", nargs="?", default="tiny_model.pt")
    p.add_argument("--aoti", action="store_true", help="write an AOTInductor package instead of TorchScript")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="the package's device type (--aoti)")
    p.add_argument("--reference", action="store_true", help="write a spec with fixed inputs and its reference output")
    a = p.parse_args()
    if a.reference:
        save_reference(a.out)
    elif a.aoti:
        save_aoti(a.out, a.device)
    else:
        torch.jit.save(torch.jit.script(Tiny()), a.out)
    print(a.out, os.path.getsize(a.out), "bytes", file=sys.stderr)
