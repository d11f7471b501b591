"""Variant C of scripts/bench: the same fixed check in Python with the machine's torch."""
import sys

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
b = torch.tensor([[1.0, 1.0], [1.0, 0.0]], device=device, requires_grad=True)
p = a @ b
loss = p.sum() ** 2
loss.backward()
if device == "cuda":
    torch.cuda.synchronize()
ok = (p.tolist() == [[3, 1], [7, 3]] and loss.item() == 196 and a.grad.tolist() == [[56, 28], [56, 28]]
      and b.grad.tolist() == [[112, 112], [168, 168]])
print("ok" if ok else "WRONG")
sys.exit(0 if ok else 1)
