#include "load_checks.h"

#include <algorithm>

#include <fmt/format.h>

#include "performance.h"

namespace kd::load {

std::optional<double> pcie_gb_s(int64_t generation, int64_t width) {
  // GT/s per lane and the encoding's share of it: Gen 1-2 8b/10b, Gen 3-5 128b/130b, Gen 6 FLIT (242 of 256 bytes).
  static constexpr double kPerLane[] = {0, 2.5 * 8 / 10, 5.0 * 8 / 10, 8.0 * 128 / 130, 16.0 * 128 / 130,
                                        32.0 * 128 / 130, 64.0 * 242 / 256};
  if (generation < 1 || generation > 6 || width < 1 || width > 32) return std::nullopt;
  return kPerLane[generation] * static_cast<double>(width) / 8;  // Gbit/s to GB/s
}

HostLinkExpectation expected_host_link(const HostLinkFacts& f) {
  HostLinkExpectation e;
  if (f.c2c_links) {
    e.kind = "nvlink-c2c";
    if (*f.c2c_links > 0 && f.c2c_gb_s && *f.c2c_gb_s > 0) e.expected_gb_s = f.c2c_gb_s;
    else e.why_not = "NVML lists NVLink-C2C links to the CPU, but none is active";
    return e;
  }
  if (f.gen_max && f.width_max) e.expected_gb_s = pcie_gb_s(*f.gen_max, *f.width_max);
  if (e.expected_gb_s) e.kind = "pcie";
  else e.why_not = "NVML does not report the PCIe link's generation and width";
  return e;
}

Steady steady_fraction(const std::vector<double>& t_s, const std::vector<double>& rates, double seconds) {
  Steady s;
  const size_t n = std::min(t_s.size(), rates.size());
  if (n == 0) return s;
  const double first_end = std::min(seconds / 5, 10.0), second_half = seconds / 2;
  std::vector<double> first, steady;
  for (size_t i = 0; i < n; ++i) {
    if (t_s[i] <= first_end || first.empty()) first.push_back(rates[i]);
    if (t_s[i] > second_half && i > 0) steady.push_back(rates[i]);
  }
  if (steady.empty()) steady.push_back(rates[n - 1]);
  s.first = perf::median(first);
  s.steady = perf::median(steady);
  s.fraction = s.first > 0 ? s.steady / s.first : 0;
  s.first_points = first.size();
  s.steady_points = steady.size();
  return s;
}

std::vector<std::string> held_reasons(const std::vector<std::vector<std::string>>& looks) {
  std::vector<std::string> out;
  for (const auto& look : looks)
    for (const std::string& r : look)
      if (r != "gpu_idle" && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  return out;
}

std::string sustained_below_floor(const Steady& s, double floor, const std::string& unit,
                                  const std::vector<std::string>& reasons, bool nvml_read) {
  const std::string why = !nvml_read       ? "NVML could not be read, so no reason is known"
                          : reasons.empty() ? "NVML gave no clock-event reason"
                                            : fmt::format("NVML's clock-event reasons: {}", fmt::join(reasons, ", "));
  return fmt::format("sustained load: the steady throughput {:.3f} {} is {:.3f} of the first seconds' {:.3f} {}, below the "
                     "floor {} (--min-sustained-fraction); {}",
                     s.steady, unit, s.fraction, s.first, unit, floor, why);
}

}  // namespace kd::load
