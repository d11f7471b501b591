#include "memory_checks.h"
#include "text_scan.h"

#include <cmath>

#include <fmt/format.h>

namespace kd::memory {
namespace {

constexpr double kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

std::string phase_text(const std::string& phase) {
  if (phase == "load") return "loading the model";
  if (phase == "first_compute") return "the first compute";
  if (phase == "iterations") return "the iterations";
  return "step " + phase;
}

// Other processes hold a real share of the device: the same threshold as the generic OOM hint.
bool others_matter(const OomEvent& e) {
  const double others = static_cast<double>(held_by_others(e));
  return others > 0.5 * kGiB && others > 0.05 * static_cast<double>(e.device_total);
}

}  // namespace

std::string bytes_text(double b) {
  if (b >= kGiB) return fmt::format("{:.2f} GiB", b / kGiB);
  if (b >= kMiB) return fmt::format("{:.1f} MiB", b / kMiB);
  if (b >= kKiB) return fmt::format("{:.1f} KiB", b / kKiB);
  return fmt::format("{:.0f} bytes", b);
}

std::optional<uint64_t> requested_bytes(const std::string& m) {
  using namespace scan;
  // CUDA's allocator: "Tried to allocate 64.00 MiB"; the CPU's: "tried to allocate 1125899906842624 bytes".
  if (const auto g = search(m, {text("Tried to allocate "), number(), text(" "), word({"bytes", "KiB", "MiB", "GiB", "TiB"})})) {
    const std::string& unit = (*g)[1];
    const double scale = unit == "TiB" ? kGiB * 1024 : unit == "GiB" ? kGiB : unit == "MiB" ? kMiB : unit == "KiB" ? kKiB : 1;
    return static_cast<uint64_t>(std::llround(std::stod((*g)[0]) * scale));
  }
  if (const auto g = search(m, {text("tried to allocate "), number(false), text(" bytes")})) return std::stoull((*g)[0]);
  return std::nullopt;
}

uint64_t held_by_others(const OomEvent& e) {
  const uint64_t used = e.device_free + e.reserved;
  return e.device_total > used ? e.device_total - used : 0;
}

OomVerdict classify_oom(const OomEvent& e) {
  OomVerdict v;
  v.stage = "L5.oom." + e.phase;
  const std::string what = e.requested ? "tried to allocate " + bytes_text(static_cast<double>(*e.requested))
                                       : "the requested size is not in the error";
  if (!e.device_numbers) {
    v.message = fmt::format("{} ran out of host memory: {}", phase_text(e.phase), what);
  } else {
    const std::string cap =
        e.fraction ? fmt::format("; this run may hold {} (--memory-fraction {})",
                                 bytes_text(*e.fraction * static_cast<double>(e.device_total)), *e.fraction)
                   : "";
    v.message = fmt::format("{} ran out of memory: {}; {} of {} free on the device{}; this run's allocator held {} "
                            "({} allocated); held outside it (CUDA contexts, this one's too, and other processes) {}",
                            phase_text(e.phase), what, bytes_text(static_cast<double>(e.device_free)),
                            bytes_text(static_cast<double>(e.device_total)), cap, bytes_text(static_cast<double>(e.reserved)),
                            bytes_text(static_cast<double>(e.allocated)), bytes_text(static_cast<double>(held_by_others(e))));
  }
  if (e.device_numbers && !e.fraction && others_matter(e)) {
    v.cause = fmt::format("other processes (and CUDA contexts) hold {} of the device's {}",
                          bytes_text(static_cast<double>(held_by_others(e))), bytes_text(static_cast<double>(e.device_total)));
    v.action = "free the GPU (nvidia-smi lists the processes holding it) or choose another device, then rerun";
    return v;
  }
  const std::string limit = e.fraction ? " within --memory-fraction's limit" : "";
  if (e.phase == "load") {
    v.cause = "the model's weights do not fit in the memory this run may use" + limit;
    v.action = "use a GPU with more memory, or load the weights in lower precision (bfloat16, float16, 8-bit) or "
               "sharded across GPUs";
  } else if (e.phase == "first_compute") {
    v.cause = "the weights fit, but the first compute's activations and workspace do not" + limit;
    v.action = "reduce the batch size or sequence length; compute under inference mode (torch.inference_mode or "
               "no_grad) when no gradients are needed; or use mixed precision or activation checkpointing";
  } else if (e.phase == "iterations") {
    v.cause = "the first compute fit, but memory held across iterations grew until it ran out: tensors from earlier "
              "iterations are still referenced" + limit;
    v.action = "look for tensors kept across iterations (losses.append(loss) keeps every graph: keep loss.item() or "
               "loss.detach()); L5.growth measures the growth per iteration when memory suffices";
  } else {
    v.cause = "the device ran out of memory in " + phase_text(e.phase) + limit;
    v.action = "reduce the workload or use a GPU with more memory";
  }
  return v;
}

Growth judge_growth(const std::vector<uint64_t>& a, double tolerance) {
  Growth g;
  if (a.size() < 2) {
    g.message = "fewer than two iterations: no growth measured";
    return g;
  }
  const double first = static_cast<double>(a.front()), last = static_cast<double>(a.back());
  g.per_iteration = (last - first) / static_cast<double>(a.size() - 1);
  g.beyond = g.per_iteration > tolerance;
  const std::string sign = g.per_iteration < 0 ? "-" : "";
  g.message = fmt::format("allocated memory {} by {}{} per iteration over {} iterations ({} to {}){}",
                          g.beyond ? "grew" : "changed", sign, bytes_text(std::fabs(g.per_iteration)), a.size(),
                          bytes_text(first), bytes_text(last),
                          g.beyond ? fmt::format(", beyond the tolerance of {} per iteration: tensors are kept "
                                                 "across iterations", bytes_text(tolerance))
                                   : fmt::format(", within the tolerance of {} per iteration", bytes_text(tolerance)));
  return g;
}

}  // namespace kd::memory
