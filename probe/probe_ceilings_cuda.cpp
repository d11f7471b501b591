// Layer L6 on a CUDA device: timing by CUDA events (a host clock around an asynchronous
// launch measures the launch) and the device ceilings. CUDA-only, like probe_cuda.cpp.
// Every ceiling: random data (zeros can take short cuts), warm-up first, each repeat timed
// by its own pair of events, sized well past the L2 cache (H200: 50 MiB).
#include <ATen/Context.h>
#include <c10/cuda/CUDAEvent.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/rand.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_ops.h"
#include "elapsed.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

constexpr int64_t kCopyBytes = int64_t(1) << 30;  // 1 GiB each way, unless less memory is free for it
constexpr int64_t kMatmulN = 8192;

// Restores cuBLAS's TF32 setting whatever happens, so later work is not changed by us.
struct Tf32Setting {
  bool before;
  explicit Tf32Setting(bool allow) : before(at::globalContext().allowTF32CuBLAS()) {
    at::globalContext().setAllowTF32CuBLAS(allow);
  }
  ~Tf32Setting() { at::globalContext().setAllowTF32CuBLAS(before); }
};

// warm-up runs of op, then `repeats` runs each between its own events; seconds per run.
template <class Op>
void time_repeats(Op op, int warmup, int repeats, kd_ceiling_out* out) {
  for (int i = 0; i < warmup; ++i) op();
  std::vector<c10::cuda::CUDAEvent> ev;
  ev.reserve(static_cast<size_t>(2 * repeats));
  for (int i = 0; i < 2 * repeats; ++i) ev.emplace_back(cudaEventDefault);  // timing enabled
  for (int i = 0; i < repeats; ++i) {
    ev[2 * i].record();
    op();
    ev[2 * i + 1].record();
  }
  ev.back().synchronize();
  for (int i = 0; i < repeats; ++i) out->seconds[i] = ev[2 * i].elapsed_time(ev[2 * i + 1]) / 1000.0;
  out->repeats = repeats;
}

void copy_ceiling(const at::Device& d, int64_t bytes, kd_ceiling_out* out) {
  const at::Tensor src = at::rand({bytes / 4}, at::TensorOptions().dtype(at::kFloat).device(d));
  at::Tensor dst = at::empty_like(src);
  time_repeats([&] { dst.copy_(src); }, 3, 10, out);
  out->work = 2.0 * static_cast<double>(bytes);  // read + written
  const std::string size = bytes == kCopyBytes ? "1 GiB" : std::to_string(bytes >> 20) + " MiB";
  copy_to(out->desc, sizeof out->desc,
          "device-to-device copy of " + size + " float32 (random), bytes read + written, median of 10");
}

void matmul_ceiling(const at::Device& d, int kind, kd_ceiling_out* out) {
  const bool bf16 = kind == KD_CEILING_MATMUL_BF16;
  const auto opts = at::TensorOptions().dtype(bf16 ? at::kBFloat16 : at::kFloat).device(d);
  const at::Tensor a = at::rand({kMatmulN, kMatmulN}, opts), b = at::rand({kMatmulN, kMatmulN}, opts);
  at::Tensor c;
  const Tf32Setting tf32(kind == KD_CEILING_MATMUL_TF32);  // bf16 does not use it; fp32 without, tf32 with
  const bool slow = kind == KD_CEILING_MATMUL_FP32;         // about 20 ms a product on an H200
  const int repeats = slow ? 5 : 10;
  time_repeats([&] { c = at::mm(a, b); }, slow ? 1 : 3, repeats, out);
  const double n = static_cast<double>(kMatmulN);
  out->work = 2.0 * n * n * n;
  const char* what = bf16 ? "bf16" : slow ? "fp32, TF32 off" : "fp32 with TF32";
  copy_to(out->desc, sizeof out->desc,
          std::string("matrix product 8192x8192x8192, ") + what + " (random), 2n^3 operations, median of " +
              std::to_string(repeats));
}

}  // namespace

void synchronize_or_throw(int index) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  c10::cuda::device_synchronize();
}

void timed_on_device(int index, const std::function<void()>& fn, double* host_ms, double* event_ms) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  c10::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
  c10::cuda::device_synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  start.record();
  fn();
  end.record();
  c10::cuda::device_synchronize();
  *host_ms = ms_since(t0);
  *event_ms = start.elapsed_time(end);
}

kd_status ceiling(int index, int kind, int64_t copy_bytes, kd_ceiling_out* out) {
  return guarded([&] {
    *out = kd_ceiling_out{};
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    const at::Device d(at::kCUDA, static_cast<c10::DeviceIndex>(index));
    if (kind == KD_CEILING_COPY) {
      if (copy_bytes < 0 || copy_bytes > kCopyBytes) throw std::invalid_argument("ceiling: copy_bytes not in [0, 1 GiB]");
      copy_ceiling(d, copy_bytes > 0 ? copy_bytes / 4 * 4 : kCopyBytes, out);
    } else if (kind >= KD_CEILING_MATMUL_BF16 && kind <= KD_CEILING_MATMUL_TF32) {
      matmul_ceiling(d, kind, out);
    } else {
      throw std::invalid_argument("ceiling: unknown kind");
    }
  });
}

}  // namespace kd::probe
