// Layer L7 on CUDA: a copy from one GPU to another, verified on the destination device and
// timed by CUDA events. CUDA-only, like probe_cuda.cpp. LibTorch's cross-device copy_ uses
// peer access when the pair has it (enabling it on first use) and otherwise lets the driver
// stage the copy through host memory, so a pair without peer access is measured, not failed.
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/nonzero.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "device_ops.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

at::Device cuda(int index) { return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)); }

at::Tensor pattern(int64_t elements, int index) {
  return at::arange(elements, at::TensorOptions().dtype(at::kInt).device(cuda(index)));
}

// Compares dst with the pattern built on dst's own device: the count and the first wrong element.
void verify(const at::Tensor& dst, int dst_index, kd_peer_copy_out* out) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(dst_index));
  const at::Tensor wrong = at::ne(dst, pattern(dst.numel(), dst_index));
  out->mismatches = wrong.sum().item<int64_t>();
  out->first_bad = -1;
  if (out->mismatches > 0) {
    out->first_bad = at::nonzero(wrong)[0][0].item<int64_t>();
    out->first_bad_value = dst[out->first_bad].item<int64_t>();
  }
}

}  // namespace

kd_status peer_copy(int src, int dst, int64_t bytes, int repeats, int fault, kd_peer_copy_out* out) {
  return guarded([&] {
    *out = kd_peer_copy_out{};
    if (src == dst) throw std::invalid_argument("peer_copy: source and destination are the same GPU");
    if (repeats < 0 || repeats > KD_PEER_MAX_REPEATS) throw std::invalid_argument("peer_copy: repeats out of range");
    const int64_t elements = bytes / 4;
    out->bytes = elements * 4;
    out->peer_access = at::cuda::canDeviceAccessPeer(static_cast<c10::DeviceIndex>(src), static_cast<c10::DeviceIndex>(dst));
    const at::Tensor from = pattern(elements, src);
    at::Tensor to = at::empty({elements}, at::TensorOptions().dtype(at::kInt).device(cuda(dst)));
    to.copy_(from);
    // Test-only (--inject-fault wrong-product): one element changed after the copy, as a broken link would.
    if (fault == KD_FAULT_WRONG_PRODUCT) to[elements / 2].fill_(-7);
    verify(to, dst, out);
    const std::string path = out->peer_access ? "peer access" : "through host memory (no peer access)";
    copy_to(out->desc, sizeof out->desc,
            "GPU " + std::to_string(src) + " -> GPU " + std::to_string(dst) + ", " + std::to_string(out->bytes >> 20) +
                " MiB int32 pattern, " + path);
    if (repeats == 0 || out->mismatches > 0) return;
    // LibTorch runs a cross-device copy on the source device's current stream (after a barrier with
    // the destination's), so events recorded there bracket the copy itself.
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(src));
    for (int i = 0; i < 2; ++i) to.copy_(from);  // warm-up
    std::vector<c10::cuda::CUDAEvent> ev;
    ev.reserve(static_cast<size_t>(2 * repeats));
    for (int i = 0; i < 2 * repeats; ++i) ev.emplace_back(cudaEventDefault);  // timing enabled
    for (int i = 0; i < repeats; ++i) {
      ev[2 * i].record();
      to.copy_(from);
      ev[2 * i + 1].record();
    }
    ev.back().synchronize();
    for (int i = 0; i < repeats; ++i) out->seconds[i] = ev[2 * i].elapsed_time(ev[2 * i + 1]) / 1000.0;
    out->repeats = repeats;
    verify(to, dst, out);  // the timed copies delivered the pattern too
  });
}

}  // namespace kd::probe
