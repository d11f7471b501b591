#include "gpu_sharing.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "memory_checks.h"

namespace kd::sharing {
namespace {

bool above_allowance(const std::optional<uint64_t>& bytes) { return bytes && *bytes > kOutsideAllowance; }

std::string gib(uint64_t bytes) { return memory::bytes_text(static_cast<double>(bytes)); }

std::string processes(int64_t n) { return fmt::format("{} other process{}", n, n == 1 ? "" : "es"); }

// Whether others() is a count of processes, not only a sign that some hold memory.
bool counted(const Seen& s) { return s.source == Source::Nvml && !above_allowance(s.unlisted_memory_bytes); }

// "; GPU utilization up to 100 %", or "" when NVML did not report it.
std::string utilization(const Seen& s) {
  return s.utilization_percent ? fmt::format("; GPU utilization up to {} %", *s.utilization_percent) : "";
}

}  // namespace

const char* name(Source source) { return source == Source::Nvml ? "nvml" : "driver_memory"; }

int64_t others(const Seen& s) {
  if (s.source == Source::DriverMemory) return above_allowance(s.other_memory_bytes) ? 1 : 0;
  return s.other_processes.value_or(0) + (above_allowance(s.unlisted_memory_bytes) ? 1 : 0);
}

std::string describe(const Seen& s) {
  if (s.source == Source::DriverMemory) {
    if (!above_allowance(s.other_memory_bytes)) return "";
    return fmt::format("other processes ({} held beyond this run's; NVML cannot tell which: {})", gib(*s.other_memory_bytes),
                       s.fallback_reason.empty() ? "no process list" : s.fallback_reason);
  }
  std::string out;
  if (const int64_t n = s.other_processes.value_or(0); n > 0)
    out = s.other_memory_bytes ? fmt::format("{} ({})", processes(n), gib(*s.other_memory_bytes)) : processes(n);
  if (above_allowance(s.unlisted_memory_bytes))
    out += fmt::format("{}processes NVML does not list ({})", out.empty() ? "" : " and ", gib(*s.unlisted_memory_bytes));
  return out;
}

Contention judge(const Seen& s) {
  Contention c;
  const std::string who = describe(s);
  if (who.empty()) return c;
  if (s.source == Source::DriverMemory) {
    c.contended = true;  // whether they computed cannot be told: never blame the card for them
    c.what = who + utilization(s);
    return c;
  }
  const bool listed = s.other_processes.value_or(0) > 0;
  const bool seen_idle = s.other_sm_percent && *s.other_sm_percent < kIdlePercent;
  c.contended = (listed && (!seen_idle || s.others_computed_earlier)) || above_allowance(s.unlisted_memory_bytes);
  std::string sm = s.other_sm_percent ? fmt::format(", up to {} % of the SMs", *s.other_sm_percent)
                                      : std::string(", their share of the SMs not reported");
  if (seen_idle && s.others_computed_earlier) sm += " (NVML's samples are coarse: seen computing earlier in this run)";
  c.what = who + (s.other_processes.value_or(0) > 0 ? sm : "") + utilization(s);
  return c;
}

Floor floor_check(const Contention& c, bool judge_shared, const std::string& figure) {
  Floor f;
  if (!c.contended || judge_shared) return f;
  f.outcome = Floor::Outcome::NotJudged;
  f.message = fmt::format("other processes used the GPU during the measurement: {}; {}; the floor is not applied to a "
                          "shared GPU (--judge-shared-gpu applies it)", c.what, figure);
  return f;
}

Budget budget(uint64_t free_bytes, double fraction, const Seen& before) {
  Budget b;
  b.others = others(before);
  const double share = std::clamp(fraction, 0.0, 1.0) / static_cast<double>(b.others + 1);
  b.bytes = static_cast<uint64_t>(std::floor(share * static_cast<double>(free_bytes)));
  b.kept = free_bytes - std::min(b.bytes, free_bytes);
  if (b.others > 0 && free_bytes > 0)
    b.note = fmt::format("kept {:.0f} % of the free memory ({}) for {}", 100.0 * static_cast<double>(b.kept) / static_cast<double>(free_bytes),
                         gib(b.kept), counted(before) ? processes(b.others) : std::string("other processes"));
  return b;
}

}  // namespace kd::sharing
