// Variant B of scripts/bench: the smallest LibTorch program doing the fixed check of docs/contract.md
// (a @ b, loss = (sum p)^2, backward, synchronize) -- the floor the diagnostic is measured against.
// Usage: minimal_check cuda|cpu. Exit 0 when every value is exact.
#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/device_sync.h"

int main(int argc, char** argv) {
  const bool gpu = argc > 1 && std::string(argv[1]) == "cuda";
  const at::Device device = gpu ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  float av[4] = {1, 2, 3, 4}, bv[4] = {1, 1, 1, 0};
  const auto opts = at::TensorOptions().dtype(at::kFloat);
  at::Tensor a = at::from_blob(av, {2, 2}, opts).to(device).requires_grad_(true);
  at::Tensor b = at::from_blob(bv, {2, 2}, opts).to(device).requires_grad_(true);
  at::Tensor p = a.matmul(b);
  at::Tensor s = p.sum();
  at::Tensor loss = s.mul(s);
  loss.backward();
  if (gpu) kd_bench::synchronize();
  const at::Tensor ph = p.detach().cpu().contiguous(), ga = a.grad().cpu().contiguous(), gb = b.grad().cpu().contiguous();
  const float want_p[4] = {3, 1, 7, 3}, want_ga[4] = {56, 28, 56, 28}, want_gb[4] = {112, 112, 168, 168};
  const bool ok = std::memcmp(ph.data_ptr<float>(), want_p, sizeof want_p) == 0 &&
                  std::memcmp(ga.data_ptr<float>(), want_ga, sizeof want_ga) == 0 &&
                  std::memcmp(gb.data_ptr<float>(), want_gb, sizeof want_gb) == 0 && loss.item<float>() == 196.f;
  std::printf("%s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
