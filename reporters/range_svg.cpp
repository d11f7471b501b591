#include "range_svg.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"

namespace kd {
namespace {

using nlohmann::json;
using report::json_at;
using report::read;

constexpr double kWidth = 720, kLeft = 80, kRight = 700, kPanelHeight = 200;
constexpr double kTop[2] = {76, 336};  // the latency panel, the memory panel

struct Series {
  std::string name, colour;
  std::vector<std::pair<double, double>> xy;  // (value, y)
};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Reports can come from a broken worker: anything not a number reads as absent.
// A numeric part, NaN when absent.
template <class T>
double num(const json& j, const report::Field<T>& row) {
  const json& v = report::json_at(j, row);
  return v.is_number() ? v.get<double>() : NAN;
}

// Panels over one x-axis: log2 (the operating range's values) or linear (the sustained load's seconds).
class Plot {
 public:
  Plot(double lo, double hi, bool log_x = true)
      : log_(log_x), lx_(log_x ? std::log2(lo) : lo), hx_(log_x ? std::max(std::log2(hi), std::log2(lo) + 1) : std::max(hi, lo + 1)) {}
  double x(double v) const { return kLeft + ((log_ ? std::log2(v) : v) - lx_) / (hx_ - lx_) * (kRight - kLeft); }

  // One panel at `top`: its frame, y ticks from 0 to the largest value, the x ticks (powers of two, or five even
  // steps), the series.
  std::string panel(double top, const std::string& label, const std::vector<Series>& series, double ymax) const {
    const double bottom = top + kPanelHeight;
    ymax = ymax > 0 ? ymax * 1.1 : 1;
    auto y = [&](double v) { return bottom - v / ymax * kPanelHeight; };
    std::string out = fmt::format(R"(<g class="panel"><rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)",
                                  kLeft, top, kRight - kLeft, kPanelHeight);
    out += fmt::format(R"svg(<text x="20" y="{}" transform="rotate(-90 20 {})" text-anchor="middle">{}</text>)svg",
                       top + kPanelHeight / 2, top + kPanelHeight / 2, escape(label));
    for (int t = 0; t <= 4; ++t) {
      const double v = ymax / 1.1 * t / 4;
      out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end" font-size="10">{:.3g}</text>)", kLeft - 4, y(v) + 3, v);
    }
    for (double e = std::ceil(lx_); log_ && e <= hx_; e += std::max(1.0, std::ceil((hx_ - lx_) / 12))) {
      out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#ddd"/>)", x(std::exp2(e)), top, bottom);
      out += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="10">2^{}</text>)", x(std::exp2(e)),
                         bottom + 14, static_cast<int>(e));
    }
    for (int t = 0; !log_ && t <= 5; ++t) {
      const double v = lx_ + (hx_ - lx_) * t / 5;
      out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#ddd"/>)", x(v), top, bottom);
      out += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="10">{:.3g}</text>)", x(v), bottom + 14, v);
    }
    double ly = top + 14;
    for (const auto& s : series) {
      if (s.xy.empty()) continue;
      std::string pts;
      for (const auto& [v, w] : s.xy) pts += fmt::format("{:.1f},{:.1f} ", x(v), y(w));
      out += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>)", s.colour, pts);
      for (const auto& [v, w] : s.xy)
        out += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{} {:.0f}: {:.6g}</title></circle>)", x(v),
                           y(w), s.colour, escape(s.name), v, w);
      out += fmt::format(R"(<text x="{}" y="{}" fill="{}" font-size="11">{}</text>)", kLeft + 8, ly, s.colour, escape(s.name));
      ly += 14;
    }
    return out + "</g>";
  }

 private:
  bool log_;
  double lx_, hx_;
};

double ymax(const std::vector<const Series*>& ss) {
  double m = 0;
  for (const Series* s : ss)
    for (const auto& [v, w] : s->xy) m = std::max(m, w);
  return m;
}

std::string svg_head(double height) {
  return fmt::format(
      R"(<?xml version="1.0" encoding="UTF-8"?>)"
      "\n"
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" font-size="12">)"
      "\n",
      kWidth, height, kWidth, height);
}

}  // namespace

std::string range_svg(const json& range) {
  const json& points = read(range, report::range_points);
  if (!points.is_array()) return "";
  std::vector<json> ran;
  for (const auto& p : points)
    if (read(p, report::point_ran) == true && num(p, report::point_value) >= 1) ran.push_back(p);
  if (ran.empty()) return "";
  const auto value = [](const json& p) { return num(p, report::point_value); };
  std::sort(ran.begin(), ran.end(), [&](const json& a, const json& b) { return value(a) < value(b); });
  const std::string axis = read(range, report::range_axis).value_or("value");
  const json first_fail = num(range, report::range_first_fail) >= 1 ? json_at(range, report::range_first_fail) : json();
  const double hi = std::max(value(ran.back()), first_fail.is_number() ? first_fail.get<double>() : 0.0);
  const Plot plot(value(ran.front()), hi);

  Series latency{"warm median latency, ms", "#1f77b4", {}}, peak{"peak allocated, GiB", "#d62728", {}},
      reserved{"reserved, GiB", "#ff7f0e", {}}, estimate{"estimated size, GiB (CPU)", "#2ca02c", {}},
      p95{"p95 latency, ms", "#9467bd", {}}, rss{"largest process resident, GiB", "#8c564b", {}};
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  for (const auto& p : ran) {
    // The lines join what passed; a failed point's counters are read after its release (the dashed line marks it).
    if (read(p, report::point_result) != "passed") continue;
    const double v = value(p);
    auto add = [&](Series* s, double y, double scale) {
      if (!std::isnan(y)) s->xy.emplace_back(v, y / scale);
    };
    add(&latency, num(p, report::point_warm_median_ms), 1);
    add(&p95, num(p, report::point_p95_ms), 1);             // concurrency axis
    add(&rss, num(p, report::point_rss_peak_bytes), kGiB);  // processes axis
    add(&peak, num(p, report::point_peak_allocated_bytes), kGiB);
    add(&reserved, num(p, report::point_reserved_bytes), kGiB);
    if (std::isnan(num(p, report::point_peak_allocated_bytes))) add(&estimate, num(p, report::point_estimated_bytes), kGiB);
  }
  double mem_max = ymax({&peak, &reserved, &estimate, &rss});
  const double cap = num(range, report::range_memory_cap_bytes) / kGiB;
  if (!std::isnan(cap)) mem_max = std::max(mem_max, cap);

  const std::string largest = json_at(range, report::range_largest_pass).dump(), fail = first_fail.dump();
  std::string svg = svg_head(600);
  svg += fmt::format(R"(<text x="{}" y="22" font-size="15" font-weight="bold">Operating range: {}, largest pass {}, first failure {} ({})</text>)",
                     kLeft, escape(axis), escape(largest), escape(fail), escape(read(range, report::range_stop_reason).value_or("?")));
  svg += fmt::format(R"(<text x="{}" y="42" font-size="10">{}</text>)", kLeft, escape(read(range, report::range_workload).value_or("?")));
  svg += fmt::format(R"(<text x="{}" y="58" font-size="10">log2 x-axis; warm median of the synchronized forward passes</text>)", kLeft);
  svg += "\n" + plot.panel(kTop[0], "latency (ms)", {latency, p95}, ymax({&latency, &p95})) + "\n";
  svg += plot.panel(kTop[1], "memory (GiB)", {peak, reserved, estimate, rss}, mem_max) + "\n";
  if (num(range, report::range_knee) >= 1) {  // concurrency: where throughput stopped growing
    const double x = plot.x(num(range, report::range_knee));
    svg += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#2ca02c" stroke-dasharray="6 3"/>)", x,
                       kTop[0], kTop[0] + kPanelHeight);
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" fill="#2ca02c" font-size="11">knee {}</text>)", x,
                       kTop[0] - 4, json_at(range, report::range_knee).dump());
  }
  const double bottom = kTop[1] + kPanelHeight;
  if (!std::isnan(cap)) {
    const double y = bottom - cap / (mem_max * 1.1) * kPanelHeight;
    svg += fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" stroke="#555" stroke-dasharray="4 3"/>)", kLeft, kRight, y, y);
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end" font-size="10">cap {:.3g} GiB</text>)", kRight - 4, y - 4, cap);
  }
  if (first_fail.is_number()) {
    const double x = plot.x(first_fail.get<double>());
    svg += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#d62728" stroke-dasharray="2 2"/>)", x,
                       kTop[0], bottom);
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" fill="#d62728" font-size="11">first failure {}</text>)", x,
                       bottom + 30, fail);
  }
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", (kLeft + kRight) / 2, bottom + 50, escape(axis));
  return svg + "\n</svg>\n";
}

}  // namespace kd

namespace kd {

std::string sustained_svg(const json& s) {
  const json& curve = read(s, report::sustained_curve);
  if (!curve.is_array() || curve.empty()) return "";
  Series rate{"throughput, TFLOP/s", "#1f77b4", {}}, clock{"SM clock, MHz (NVML)", "#ff7f0e", {}},
      temperature{"temperature, C (NVML)", "#d62728", {}}, power{"power, W (NVML)", "#8c564b", {}};
  const auto add = [](Series* series, const json& look, const char* key) {
    if (look.is_object() && look.contains(key) && look[key].is_number() && look["t_s"].is_number())
      series->xy.emplace_back(look["t_s"].get<double>(), look[key].get<double>());
  };
  for (const json& p : curve) add(&rate, p, "rate");
  const json& looks = read(s, report::sustained_nvml);
  for (const json& l : looks.is_array() ? looks : json::array()) {
    add(&clock, l, "sm_clock_mhz");
    add(&temperature, l, "temperature_c");
    add(&power, l, "power_w");
  }
  const double seconds = num(s, report::sustained_seconds);
  const Plot plot(0, std::isnan(seconds) ? rate.xy.back().first : seconds, false);
  const auto reasons = read(s, report::sustained_reasons).value_or(std::vector<std::string>{});
  constexpr double kTops[3] = {76, 316, 556};
  std::string svg = svg_head(840);
  svg += fmt::format(R"(<text x="{}" y="22" font-size="15" font-weight="bold">Sustained load: {:.3g} s, steady {:.3g} of the first seconds (floor {:.3g})</text>)",
                     kLeft, seconds, num(s, report::sustained_fraction), num(s, report::sustained_floor));
  svg += fmt::format(R"(<text x="{}" y="42" font-size="10">{}</text>)", kLeft, escape(read(s, report::sustained_workload).value_or("?")));
  svg += fmt::format(R"(<text x="{}" y="58" font-size="10">clock-event reasons in the second half: {}</text>)", kLeft,
                     escape(reasons.empty() ? std::string("none given") : fmt::format("{}", fmt::join(reasons, ", "))));
  svg += "\n" + plot.panel(kTops[0], "throughput (TFLOP/s)", {rate}, ymax({&rate})) + "\n";
  svg += plot.panel(kTops[1], "SM clock (MHz)", {clock}, ymax({&clock})) + "\n";
  svg += plot.panel(kTops[2], "temperature (C), power (W)", {temperature, power}, ymax({&temperature, &power})) + "\n";
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">seconds since the load began</text>)", (kLeft + kRight) / 2,
                     kTops[2] + kPanelHeight + 34);
  return svg + "\n</svg>\n";
}

}  // namespace kd
