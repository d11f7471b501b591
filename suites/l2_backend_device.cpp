// L2 backend & device: the build declares a GPU backend, the GPU is usable from this
// process, the requested index exists, and what the device is.
#include <fmt/format.h>

#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "fixtures/nvml_facts.h"
#include "suites/steps.h"
#include "fixtures/target_gpu.h"
#include "machine/kernel_log.h"
#include "machine/loaded_libcuda.h"
#include "probe/build_settings.h"
#include "contract/events.h"
#include "contract/report_parts.h"
#include "verdict/gpu_health.h"
#include "verdict/xid_catalogue.h"

namespace kd {
namespace {
std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (size_t start = 0; start < s.size();) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? s.size() : comma + 1;
  }
  return out;
}

std::string info_backend(const WorkerContext& ctx) {
  kd_torch_info info{};
  ctx.probe->torch_info(&info);
  return info.backend;
}
}  // namespace


Outcome l2_backend_declared(WorkerContext& ctx) {
  kd_torch_info info{};
  ctx.probe->torch_info(&info);
  const std::string backend = info.backend;
  if (backend == "none" && !ctx.cpu_mode())
    return Outcome::fail(Code::GpuBackendAbsent,
                         fmt::format("LibTorch {} declares neither CUDA nor HIP (a CPU-only build)", info.version));
  return Outcome::pass();
}

Outcome l2_gpu_available(WorkerContext& ctx) {
  if (ctx.cpu_mode()) return Outcome::not_applicable("CPU mode does not query GPU state");
  kd_gpu_state g{};
  const kd_status s = ctx.probe->gpu_state(&g);
  if (s.kind != KD_OK) return backend_failure(s);
  ctx.fact(report::pytorch_gpu_available, g.available != 0);
  ctx.fact(report::pytorch_visible_device_count, g.device_count);
  // Which libcuda the CUDA runtime loaded, now that it tried (a forward-compatibility one, or none at all).
  if (info_backend(ctx) == "cuda") ctx.fact(report::host_libcuda, machine::loaded_libcuda());
  if (!g.available)
    return Outcome::fail(Code::GpuUnavailable, *g.reason ? g.reason : "no GPU is visible to this process");
  return Outcome::pass();
}

Outcome l2_device_index(WorkerContext& ctx) {
  if (ctx.cpu_mode()) return Outcome::not_applicable("CPU mode uses no device index");
  kd_gpu_state g{};
  ctx.probe->gpu_state(&g);
  if (ctx.device_index() >= g.device_count)
    return Outcome::fail(Code::DeviceIndexInvalid,
                         fmt::format("device index {} requested; {} device{} visible (valid: 0 to {})",
                                     ctx.device_index(), g.device_count, g.device_count == 1 ? " is" : "s are",
                                     g.device_count - 1));
  return Outcome::pass();
}

Outcome l2_device_properties(WorkerContext& ctx) {
  if (ctx.cpu_mode()) return Outcome::not_applicable("CPU mode queries no device");
  kd_device_props p{};
  const kd_status s = ctx.probe->device_props(ctx.device_index(), &p);
  if (s.kind != KD_OK) return backend_failure(s);  // e.g. no memory left for a CUDA context
  nlohmann::json device;
  report::put(&device, report::device_entry_index, ctx.device_index());
  report::put(&device, report::device_name, p.name);
  report::put(&device, report::device_capability, fmt::format("{}.{}", p.major, p.minor));
  report::put(&device, report::device_total_memory_bytes, p.total_memory_bytes);
  report::put(&device, report::device_multiprocessors, p.multiprocessors);
  report::put(&device, report::device_pci_bus_id,
              format_pci_bus_id({static_cast<unsigned>(p.pci_domain), static_cast<unsigned>(p.pci_bus),
                                 static_cast<unsigned>(p.pci_device)}));
  // Not the default mode: the supervisor waits for this worker to release the GPU before it exits (runner/main.cpp).
  ctx.compute_mode = compute_mode_name(p.compute_mode);
  report::put(&device, report::device_compute_mode, ctx.compute_mode);
  ctx.fact(report::device, device);
  // The compiled architectures appear in show_config() once CUDA is up: ask again now.
  kd_torch_info info{};
  ctx.probe->torch_info(&info);
  const std::vector<std::string> archs = split_list(info.arch_list);
  ctx.fact(report::pytorch_arch_list, archs.empty() ? std::nullopt : std::optional(archs));
  const std::optional<bool> covered = arch_covers(archs, p.major, p.minor);
  ctx.fact(report::execution_arch_supported, covered);
  return Outcome::pass();
}

// Health: NVML's facts of this device (matched by PCI address), and the kernel's Xid evidence for it (the driver's
// lines of this boot naming its PCI address: machine/kernel_log.h). Errors that a reset must clear, or a card that
// must be replaced, fail here (18); slowness and older or lesser events are only warnings.
Outcome l2_health(WorkerContext& ctx) {
  if (ctx.cpu_mode()) return Outcome::not_applicable("CPU mode does not query GPU state");
  kd_device_props p{};
  const kd_status s = ctx.probe->device_props(ctx.device_index(), &p);
  if (s.kind != KD_OK) return backend_failure(s);
  const TargetGpu gpu = target_gpu(ctx, p, Facts::AtStart);
  const std::string pci = format_pci_bus_id({static_cast<unsigned>(p.pci_domain), static_cast<unsigned>(p.pci_bus),
                                             static_cast<unsigned>(p.pci_device)});
  const std::optional<nlohmann::json> kernel_log = machine::kernel_log_result();
  const bool log_read = kernel_log && report::read(*kernel_log, report::kernel_log_readable).value_or(false);
  if (!gpu.facts && !log_read)
    return Outcome::not_applicable(gpu.why_not + "; the kernel log: " +
                                   (kernel_log ? report::read(*kernel_log, report::kernel_log_why_not).value_or("?")
                                               : std::string("not read")));
  const GpuHealth h = gpu.facts ? judge_gpu_health(*gpu.facts) : GpuHealth{};
  const xid::Judgement x = xid::judge_gpu(kernel_log.value_or(nlohmann::json()), pci);
  if (!gpu.facts) events::warning(fmt::format("GPU {}: {}; its health judged on the kernel log's Xid events only",
                                             ctx.device_index(), gpu.why_not));
  for (const auto& w : h.warnings) events::warning(fmt::format("GPU {} (NVML): {}", ctx.device_index(), w));
  for (const auto& w : x.warnings) events::warning(fmt::format("GPU {} ({}): {}", ctx.device_index(), pci, w));
  std::vector<std::string> parts;
  if (!h.problems.empty()) parts.push_back(unhealthy_message(*gpu.facts, h));
  if (!x.problems.empty())
    parts.push_back(fmt::format("the kernel log shows, for GPU {} ({}), since the driver's last load: {}: unusable "
                                "until it is reset",
                                ctx.device_index(), pci, fmt::join(x.problems, "; ")));
  if (!parts.empty()) return Outcome::fail(Code::GpuUnhealthy, fmt::format("{}", fmt::join(parts, "; ")));
  return Outcome::pass();
}

}  // namespace kd
