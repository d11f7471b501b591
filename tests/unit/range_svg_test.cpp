// operating_range.svg: well-formed XML (checked by xmllint, as a viewer would parse it) that
// carries the points' numbers; nothing without a point that ran.
#include "reporters/range_svg.h"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace kd {
namespace {

using nlohmann::json;

json point(int64_t v, const char* result, json warm, json peak, json reserved, bool ran = true) {
  return {{"value", v}, {"result", result}, {"ran", ran}, {"warm_median_ms", warm}, {"cold_ms", warm},
          {"peak_allocated_bytes", peak}, {"reserved_bytes", reserved}, {"estimated_bytes", v * 1000},
          {"seconds", 0.1}, {"note", nullptr}};
}

json gpu_range() {
  return {{"axis", "batch"}, {"workload", "L4 embeddings: 1 sequences, max length 64, int64 tokens, device cuda:0"},
          {"memory_limit", "allocator"}, {"memory_cap_bytes", 4294967296LL},
          {"points", {point(1, "passed", 0.125, 1048576, 2097152), point(2, "passed", 0.25, 2097152, 4194304),
                      point(4, "passed", 3.5, 1073741824, 2147483648LL),
                      point(8, "memory_fraction", nullptr, 3221225472LL, 3221225472LL),
                      point(6, "passed", 5.75, 2147483648LL, 3221225472LL)}},
          {"largest_pass", 6}, {"first_fail", 8}, {"stop_reason", "memory_fraction"}};
}

void expect_well_formed(const std::string& svg) {
  test::TempDir dir;
  std::ofstream(dir.file("range.svg")) << svg;
  const std::string cmd = "xmllint --noout '" + dir.file("range.svg") + "' 2>'" + dir.file("err.txt") + "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream err(dir.file("err.txt"));
  const std::string why((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << why;
}

TEST(RangeSvg, IsWellFormedXmlWithThePointsNumbers) {
  const std::string svg = range_svg(gpu_range());
  ASSERT_FALSE(svg.empty());
  expect_well_formed(svg);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  for (const char* n : {"warm median latency, ms 4: 3.5", "warm median latency, ms 6: 5.75", "peak allocated, GiB 6: 2",
                        "reserved, GiB 4: 2", "batch, largest pass 6, first failure 8 (memory_fraction)", "cap 4 GiB", "2^0",
                        "2^3", "first failure 8"})
    EXPECT_NE(svg.find(n), std::string::npos) << n;
  // The failed point (8, 3 GiB read after its release) is marked by the dashed line, not joined to the passes.
  EXPECT_EQ(svg.find("peak allocated, GiB 8:"), std::string::npos);
  EXPECT_EQ(svg.find("reserved, GiB 8:"), std::string::npos);
}

TEST(RangeSvg, TheCpuRangePlotsTheEstimateAndEscapesText) {
  json r = gpu_range();
  r["memory_limit"] = "host_estimate";
  r["memory_cap_bytes"] = nullptr;
  r["workload"] = "a <odd> & \"quoted\" workload";
  for (auto& p : r["points"]) p["peak_allocated_bytes"] = p["reserved_bytes"] = nullptr;
  const std::string svg = range_svg(r);
  expect_well_formed(svg);
  EXPECT_NE(svg.find("estimated size, GiB (CPU)"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;odd&gt; &amp; &quot;quoted&quot; workload"), std::string::npos);
  EXPECT_EQ(svg.find("peak allocated, GiB 4"), std::string::npos);
}

TEST(RangeSvg, TheConcurrencyAxisPlotsItsP95AndKneeTheProcessesAxisItsLargestProcess) {
  json r = gpu_range();
  r["axis"] = "concurrency";
  r["knee"] = 4;
  r["points"][2]["p95_ms"] = 7.25;
  std::string svg = range_svg(r);
  expect_well_formed(svg);
  for (const char* n : {"p95 latency, ms 4: 7.25", "knee 4", "concurrency, largest pass 6"})
    EXPECT_NE(svg.find(n), std::string::npos) << n;
  r["axis"] = "processes";
  r.erase("knee");
  r["points"][1]["rss_peak_bytes"] = 1073741824;
  svg = range_svg(r);
  expect_well_formed(svg);
  EXPECT_NE(svg.find("largest process resident, GiB 2: 1"), std::string::npos);
  EXPECT_EQ(svg.find("knee"), std::string::npos);
}

TEST(RangeSvg, NothingWithoutAPointThatRan) {
  EXPECT_EQ(range_svg(json()), "");
  EXPECT_EQ(range_svg({{"points", json::array()}}), "");
  EXPECT_EQ(range_svg({{"points", {point(1, "time_budget", nullptr, nullptr, nullptr, false)}}}), "");
}

TEST(RangeSvg, AMalformedRangeReadsAsAbsentNeverThrows) {  // a broken worker's facts
  const json odd = {{"points", {1, "x", json::array(), {{"ran", true}, {"value", int64_t{1} << 62}, {"warm_median_ms", "fast"}}}},
                    {"workload", 5}, {"axis", json::array()}, {"first_fail", -3}, {"memory_cap_bytes", "big"}};
  std::string svg;
  EXPECT_NO_THROW(svg = range_svg(odd));
  expect_well_formed(svg);
  EXPECT_NO_THROW(range_svg({{"points", {{{"ran", "yes"}, {"value", 4}}}}}));
}

// sustained_load.svg: the same plot on a linear time axis, three panels, NVML's looks where there are some.
TEST(SustainedSvg, IsWellFormedWithTheCurveAndNvmlsLooks) {
  const json s = {{"seconds", 4}, {"fraction", 0.5}, {"floor", 0.85}, {"workload", "products <&>"},
                  {"reasons", {"sw_power_cap"}},
                  {"curve", {{{"t_s", 1}, {"rate", 800}}, {{"t_s", 2}, {"rate", 790}}, {{"t_s", 4}, {"rate", 400}}}},
                  {"nvml", {{{"t_s", 0.5}, {"sm_clock_mhz", 1980}, {"temperature_c", 60}, {"power_w", 650.5}, {"reasons", json::array()}},
                            {{"t_s", 3.5}, {"sm_clock_mhz", 1005}, {"temperature_c", 89}, {"power_w", nullptr}}}}};
  const std::string svg = sustained_svg(s);
  expect_well_formed(svg);
  for (const char* n : {"Sustained load: 4 s, steady 0.5 of the first seconds (floor 0.85)", "products &lt;&amp;&gt;",
                        "throughput, TFLOP/s 4: 400", "SM clock, MHz (NVML) 4: 1005", "temperature, C (NVML) 4: 89",
                        "power, W (NVML) 0: 650.5", "reasons in the second half: sw_power_cap"})
    EXPECT_NE(svg.find(n), std::string::npos) << n;
  EXPECT_EQ(svg.find("2^"), std::string::npos);  // a linear axis
}

TEST(SustainedSvg, NothingWithoutACurveAndNeverThrowsOnOddFacts) {
  EXPECT_EQ(sustained_svg(json()), "");
  EXPECT_EQ(sustained_svg({{"curve", json::array()}}), "");
  std::string svg;
  EXPECT_NO_THROW(svg = sustained_svg({{"curve", {1, {{"t_s", "x"}}, {{"t_s", 1}, {"rate", 2}}}}, {"nvml", 3}, {"seconds", "s"}}));
  expect_well_formed(svg);
}

}  // namespace
}  // namespace kd
