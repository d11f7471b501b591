// The device-independent part of the probe: what LibTorch declares, and the fixed
// tiny computation of docs/contract.md (a @ b, loss = (sum p)^2, backward) on CPU or GPU.
// ATen/core/Tensor.h and from_blob only, as a one-file LibTorch program would: ATen/Version.h, ATen/ops/empty.h
// and ones.h bring ATen/Context.h, which doubled this library's compile on 2 cores (docs/BENCHMARKS.md).
#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>

#include <dlfcn.h>

#include <climits>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "build_settings.h"
#include "device_ops.h"
#include "heavy_part.h"
#include "probe_status.h"

// ATen/Version.h's one declaration this file uses (the same in LibTorch 1.13 and 2.x).
namespace at {
TORCH_API std::string show_config();
}  // namespace at

namespace kd::probe {
namespace {

struct TinyState {
  bool on_gpu = false;
  int index = 0;
  int fault = KD_FAULT_NONE;
  at::Tensor a, b, p, loss;
};
TinyState& tiny() {
  static TinyState s;
  return s;
}

// Where the LibTorch really loaded in this process comes from, read from the path of the library
// that holds at::show_config (never what the build was once told: a rebuild against another
// LibTorch must not keep an old "found via"). The path itself never leaves the probe.
std::string loaded_source() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&at::show_config), &info) == 0 || !info.dli_fname) return "unknown";
  // The real path: a library found through ld.so's cache on a merged-/usr system is named under /lib/.
  char real[PATH_MAX];
  const std::string path = ::realpath(info.dli_fname, real) ? real : info.dli_fname;
  if (path.find("/.deps/torch-venv/") != std::string::npos) return "private";  // scripts/setup's own
  if (path.find("/site-packages/torch/") != std::string::npos || path.find("/dist-packages/torch/") != std::string::npos)
    return "python";
  if (path.rfind("/usr/lib/", 0) == 0) return "debian";  // the distribution's package (libtorch-dev)
  return "prefix";
}

at::Tensor leaf(const float (&v)[4], const at::Device& device) {
  float data[4];
  std::memcpy(data, v, sizeof data);
  auto host = at::from_blob(data, {2, 2}, at::TensorOptions().dtype(at::kFloat)).clone();
  return host.to(device).requires_grad_(true);
}

void to_host4(const at::Tensor& t, float out[4]) {
  auto h = t.detach().to(at::kCPU).contiguous();
  std::memcpy(out, h.data_ptr<float>(), 4 * sizeof(float));
}

kd_status torch_info(kd_torch_info* out) {
  return guarded([&] {
    *out = kd_torch_info{};
    const BuildSettings s = parse_build_settings(at::show_config());
    copy_to(out->version, sizeof out->version, s.torch_version);
    copy_to(out->cuda_compiled, sizeof out->cuda_compiled, s.cuda_version);
    copy_to(out->hip_compiled, sizeof out->hip_compiled, s.hip_version);
    copy_to(out->backend, sizeof out->backend, s.backend());
    copy_to(out->source, sizeof out->source, loaded_source());
    std::string archs;
    for (const auto& a : s.arch_list) archs += (archs.empty() ? "" : ",") + a;
    copy_to(out->arch_list, sizeof out->arch_list, archs);
  });
}

kd_status tiny_inputs(int on_gpu, int index, int fault) {
  return guarded([&] {
    TinyState& s = tiny();
    s = TinyState{};
    s.on_gpu = on_gpu != 0;
    s.index = index;
    s.fault = fault;
    const at::Device device = s.on_gpu ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)) : at::Device(at::kCPU);
    s.a = leaf({1, 2, 3, 4}, device);
    // Test-only: b[1][1] = 1 instead of 0 gives a wrong product that the real comparison must catch.
    s.b = leaf({1, 1, 1, fault == KD_FAULT_WRONG_PRODUCT ? 1.f : 0.f}, device);
  });
}

kd_status tiny_product(float out[4]) {
  return guarded([&] {
    TinyState& s = tiny();
    if (s.fault == KD_FAULT_OUT_OF_MEMORY)  // a real allocation the device cannot satisfy (1 PiB)
      (void)s.a.new_empty({int64_t(1) << 48}, s.a.options().requires_grad(false));
    if (s.fault == KD_FAULT_RUNTIME_ERROR)  // a real backend error: mismatched shapes
      (void)s.a.matmul(s.a.new_ones({3, 3}, s.a.options().requires_grad(false)));
    s.p = s.a.matmul(s.b);
    to_host4(s.p, out);
  });
}

kd_status tiny_loss(float* out) {
  return guarded([&] {
    TinyState& s = tiny();
    const at::Tensor total = s.p.sum();
    s.loss = total.mul(total);
    *out = s.loss.detach().to(at::kCPU).item<float>();
  });
}

kd_status tiny_backward(float grad_a[4], float grad_b[4]) {
  return guarded([&] {
    TinyState& s = tiny();
    s.loss.backward();
    to_host4(s.a.grad(), grad_a);
    to_host4(s.b.grad(), grad_b);
  });
}

kd_status tiny_synchronize() {
  TinyState& s = tiny();
  if (s.fault == KD_FAULT_HANG) {
    if (s.on_gpu) return spin_forever(s.index);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // test-only CPU hang
  }
  return s.on_gpu ? synchronize(s.index) : ok_status();
}

// The entries of L4 to L8 are the heavy part's (heavy_part.h): this library is L1-L3's.
template <auto Field>
constexpr auto heavy = Forward<Field>::call;
using T = kd_probe_table;

const kd_probe_table kTable = {
    KD_PROBE_ABI_VERSION, torch_info, gpu_state, device_props, tiny_inputs, tiny_product, tiny_loss, tiny_backward,
    tiny_synchronize, heavy<&T::app_embeddings>, heavy<&T::app_training>, heavy<&T::model_load>,
    heavy<&T::model_run>, heavy<&T::timing_segments>, heavy<&T::ceiling>, heavy<&T::memory_workload>,
    heavy<&T::range_memory_fraction>, heavy<&T::range_point>, heavy<&T::peer_copy>, heavy<&T::all_reduce>,
    heavy<&T::extension_load>, heavy<&T::model_signature>, heavy<&T::range_concurrent>, heavy<&T::collective_join>,
    heavy<&T::collective_all_reduce>, heavy<&T::collective_broadcast>, heavy<&T::collective_barrier>,
    heavy<&T::collective_bandwidth>, heavy<&T::collective_end>, heavy_part, heavy<&T::memory_counters>,
    heavy<&T::host_link>, heavy<&T::sustained>, heavy<&T::memory_integrity>, heavy<&T::host_links_together>,
};

}  // namespace
}  // namespace kd::probe

extern "C" __attribute__((visibility("default"))) const kd_probe_table* kd_probe_get(void) { return &kd::probe::kTable; }
