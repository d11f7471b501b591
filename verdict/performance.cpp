#include "performance.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kd::perf {

double round3(double x) { return std::round(x * 1000) / 1000; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double p95(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(v.size())));  // nearest rank, 1-based
  return v[std::max<size_t>(rank, 1) - 1];
}

Judged judge(const std::string& what, double measured, std::optional<double> reference, double floor,
             const std::string& unit, const std::string& device) {
  Judged j;
  if (!reference || *reference <= 0) {
    j.message = fmt::format("{} {:.3g} {}: no reference figure for this device, no fraction", what, measured, unit);
    return j;
  }
  j.fraction = measured / *reference;
  j.below_floor = *j.fraction < floor;
  j.message = fmt::format("{} {:.3g} {} is {:.2f} of the {}'s {:.4g} {}{}", what, measured, unit, *j.fraction, device,
                          *reference, unit, j.below_floor ? fmt::format(", below the floor {}", floor) : "");
  return j;
}

Judged judge(const std::string& what, double measured, std::optional<double> reference, const Floor& floor,
             const std::string& unit, const std::string& device) {
  if (!floor.absolute) return judge(what, measured, reference, floor.value, unit, device);
  Judged j;
  if (reference && *reference > 0) j.fraction = measured / *reference;
  j.below_floor = measured < floor.value;
  j.message = fmt::format("{} {:.3g} {} is {} the floor {:g} {} for {} (--floors){}", what, measured, unit,
                          j.below_floor ? "below" : "above", floor.value, unit, device,
                          j.fraction ? fmt::format("; {:.2f} of its datasheet's {:.4g} {}", *j.fraction, *reference, unit)
                                     : "");
  return j;
}

}  // namespace kd::perf
