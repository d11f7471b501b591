"""Another user's job on the GPU, for scripts/gpu-verify-rented-box's `shared` step (docs/shared-gpus.md): it holds
FRACTION of the GPU's memory (default 0.8), then computes bf16 matrix products in a loop, and each iteration also
allocates and frees a working buffer of GROWTH GiB (default 2) and returns its cache to the driver, as a training
step's activations come and go. Each of those allocations must succeed for as long as it runs: a diagnostic beside
it must never take the memory it then needs.

Usage: python3 gpu-neighbour.py STOP_FILE [FRACTION] [GROWTH_GIB]
Prints "ready: ..." once it holds its memory, runs until STOP_FILE exists (at most 10 minutes), then prints one line,
"neighbour: ... out-of-memory: never" and exits 0, or "... out-of-memory: N times (first ...)" and exits 3."""
import os
import sys
import time

import torch

stop_file = sys.argv[1]
fraction = float(sys.argv[2]) if len(sys.argv) > 2 else 0.8
growth = int(float(sys.argv[3] if len(sys.argv) > 3 else 2) * (1 << 30))

free, total = torch.cuda.mem_get_info()
held = torch.empty(int(fraction * total), dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
b = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
torch.cuda.synchronize()
free, _ = torch.cuda.mem_get_info()
print(f"ready: holding {held.numel() / (1 << 30):.1f} GiB of {total / (1 << 30):.1f} GiB, {free / (1 << 30):.1f} GiB free",
      flush=True)

iterations, failures, first = 0, 0, ""
started = time.monotonic()
while not os.path.exists(stop_file) and time.monotonic() - started < 600:
    try:
        work = torch.empty(growth, dtype=torch.uint8, device="cuda")  # this step's working memory
        work.fill_(1)
        for _ in range(4):
            c = a @ b
        torch.cuda.synchronize()
        del work, c
    except torch.cuda.OutOfMemoryError as e:
        failures += 1
        first = first or str(e).splitlines()[0][:200]
    torch.cuda.empty_cache()  # give the working memory back: the next iteration asks the driver again
    iterations += 1

seconds = time.monotonic() - started
print(f"neighbour: {iterations} iterations in {seconds:.1f} s, holding {held.numel() / (1 << 30):.1f} GiB and growing by "
      f"{growth / (1 << 30):.1f} GiB each; out-of-memory: " + (f"{failures} times (first: {first})" if failures else "never"),
      flush=True)
sys.exit(3 if failures else 0)
