// Fleet operations (docs/fleets.md): the per-SKU floors file (verdict/floors.h) and an absolute floor's judgement, and
// the Prometheus metrics of a report (reporters/metrics.h): each family once with HELP and TYPE, labels escaped, the
// report's figures in base units. promtool checks the real binary's file: tests/e2e/test_metrics.py.
#include <map>
#include <variant>

#include <gtest/gtest.h>

#include "reporters/metrics.h"
#include "verdict/floors.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

std::string refused(const std::string& text) {
  const auto r = floors::parse(text);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

TEST(Floors, AGoodFileIsItsTable) {
  const auto r = floors::parse(R"({"devices": {"NVIDIA H200": {"copy_tb_s": 3.9, "bus_bandwidth_gb_s": 150}}})");
  ASSERT_TRUE(std::holds_alternative<json>(r));
  const json& table = std::get<json>(r);
  EXPECT_EQ(floors::lookup(table, "NVIDIA H200", "copy_tb_s"), 3.9);
  EXPECT_EQ(floors::lookup(table, "NVIDIA H200", "bus_bandwidth_gb_s"), 150);
  EXPECT_FALSE(floors::lookup(table, "NVIDIA H200", "matmul_bf16_tflops"));  // not given: the option or the default
  EXPECT_FALSE(floors::lookup(table, "NVIDIA H100 80GB HBM3", "copy_tb_s"));  // another device's name
  EXPECT_FALSE(floors::lookup(json(), "NVIDIA H200", "copy_tb_s"));           // no file
}

TEST(Floors, BadInputNamesWhatIsWrong) {
  EXPECT_EQ(refused("[]"), "the file must be a JSON object: {\"devices\": {\"NVIDIA H200\": {...}}}");
  EXPECT_EQ(refused(R"({"devices": {"NVIDIA H200": {"copy_tb_s": 3}}, "x": 1})"),
            "unknown key 'x' (the file has one key: devices)");
  EXPECT_EQ(refused(R"({"devices": {"NVIDIA H200": {"copy": 3}}})"), "devices.\"NVIDIA H200\": unknown key 'copy'");
  EXPECT_EQ(refused(R"({"devices": {"NVIDIA H200": {"copy_tb_s": 101}}})"),
            "devices.\"NVIDIA H200\".copy_tb_s must be a number of TB/s above 0 and at most 100 (L6's copy bandwidth), "
            "not 101");
  EXPECT_NE(refused(R"({"devices": {"NVIDIA H200": {"copy_tb_s": null}}})").find("not null"), std::string::npos);
  EXPECT_NE(refused("{\"devices\": {\"a\\u0007b\": {\"copy_tb_s\": 1}}}").find("control character"), std::string::npos);
  EXPECT_EQ(refused(std::string(floors::kMaxFileBytes + 1, ' ')), "the file is larger than 64 KiB");
  EXPECT_EQ(refused("").rfind("not JSON: ", 0), 0u);
}

TEST(Floors, AnAbsoluteFloorJudgesTheFigureItself) {
  const perf::Judged below = perf::judge("copy", 3.5, 4.8, perf::Floor{3.9, true, "floors_file"}, "TB/s", "NVIDIA H200");
  EXPECT_TRUE(below.below_floor);
  EXPECT_NEAR(*below.fraction, 3.5 / 4.8, 1e-9);
  EXPECT_EQ(below.message, "copy 3.5 TB/s is below the floor 3.9 TB/s for NVIDIA H200 (--floors); 0.73 of its "
                           "datasheet's 4.8 TB/s");
  // A device without a datasheet figure can still have an absolute floor, and fail it.
  EXPECT_TRUE(perf::judge("bf16 matmul", 500, std::nullopt, perf::Floor{600, true, "floors_file"}, "TFLOP/s", "X")
                  .below_floor);
  EXPECT_FALSE(perf::judge("copy", 4.0, 4.8, perf::Floor{3.9, true, "floors_file"}, "TB/s", "NVIDIA H200").below_floor);
  // A fraction floor is judged as before.
  EXPECT_TRUE(perf::judge("copy", 2.0, 4.8, perf::Floor{0.6, false, "default"}, "TB/s", "H200").below_floor);
}

// A report as the worker and the supervisor leave it after a GPU run with L6, L8 and NVML's facts.
json sample() {
  json r = json::parse(R"({
    "schema_version": "1.10", "run_id": "00000000000000aa", "started_at": "2026-12-04T16:27:00Z", "duration_ms": 12345,
    "status": "failed", "code": "PERFORMANCE_BELOW_FLOOR", "exit_code": 16, "stage": "L6.copy_bandwidth",
    "runtime": {"suite_version": "0.1.0"}, "pytorch": {"version": "2.11.0", "cuda_compiled": "13.0"},
    "device": {"name": "NVIDIA \"H200\"\\ x", "pci_bus_id": "00000000:19:00.0"},
    "error": {"signature": "device-below-floor", "action": "drain_node"},
    "layers": [{"id": "L1", "title": "runtime & import", "status": "passed"},
               {"id": "L6", "title": "timing", "status": "failed"}],
    "timing": {"ceilings": {"copy": {"measured": 1.5, "fraction": 0.3125, "floor": 3.9, "floor_kind": "absolute",
                                     "floor_source": "floors_file", "below_floor": true, "measurements": [1.4, 1.5]},
                            "matmul_bf16": {"measured": 790.5, "fraction": 0.799, "floor": 0.5, "floor_kind": "fraction",
                                            "floor_source": "default", "below_floor": false, "measurements": [790.5]}},
               "segments": {"load_ms": 120.5}},
    "collective": {"world_size": 2, "bandwidth": {"floor_busbw": 150, "floor_source": "option",
                   "busbw_measurements": [120.0, 140.5],
                   "sizes": [{"bytes": 268435456, "busbw": 140.5, "algbw": 140.5}]}},
    "host": {"nvml": {"gpus": [{"index": 0, "name": "NVIDIA H200", "pci_bus_id": "00000000:19:00.0",
                                "ecc_volatile_uncorrected": 0, "temperature_c": 41, "sm_clock_mhz": 1980,
                                "row_remap_pending": false, "problems": []}]},
             "kernel_log": {"readable": true, "records": 4000,
                            "events": [{"kind": "xid", "pci_bus_id": "00000000:19:00.0", "code": 13, "count": 3,
                                        "last_s_ago": 50.5, "after_driver_load": true, "unusable": false}]}}
  })");
  return r;
}

// The families of an exposition, by name: their HELP and TYPE lines and samples, in order.
std::map<std::string, std::vector<std::string>> families(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  std::string current;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; start = nl + 1, nl = text.find('\n', start)) {
    const std::string line = text.substr(start, nl - start);
    if (line.rfind("# HELP ", 0) == 0) {
      current = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_FALSE(out.count(current)) << current << " appears twice";
    }
    out[current].push_back(line);
  }
  return out;
}

TEST(Metrics, EachFamilyOnceWithHelpAndTypeAndTheReportsFiguresInBaseUnits) {
  const std::string text = render_metrics(sample());
  const auto f = families(text);
  for (const auto& [name, lines] : f) {
    EXPECT_EQ(name.rfind("kernodeck_", 0), 0u) << name;
    ASSERT_GE(lines.size(), 3u) << name;
    EXPECT_EQ(lines[1], "# TYPE " + name + " gauge");
    for (size_t i = 2; i < lines.size(); ++i) EXPECT_EQ(lines[i].rfind(name, 0), 0u) << lines[i];
  }
  EXPECT_EQ(f.at("kernodeck_exit_code")[2], "kernodeck_exit_code 16");
  EXPECT_EQ(f.at("kernodeck_node_at_fault")[2], "kernodeck_node_at_fault 1");
  EXPECT_EQ(f.at("kernodeck_run_timestamp_seconds")[2], "kernodeck_run_timestamp_seconds 1796401620");
  EXPECT_EQ(f.at("kernodeck_run_duration_seconds")[2], "kernodeck_run_duration_seconds 12.345");
  EXPECT_EQ(f.at("kernodeck_verdict")[2],
            R"(kernodeck_verdict{code="PERFORMANCE_BELOW_FLOOR",status="failed",stage="L6.copy_bandwidth",)"
            R"(signature="device-below-floor",action="drain_node"} 1)");
  EXPECT_EQ(f.at("kernodeck_l6_copy_bandwidth_bytes_per_second")[2], "kernodeck_l6_copy_bandwidth_bytes_per_second 1500000000000");
  EXPECT_EQ(f.at("kernodeck_l6_matmul_flops_per_second")[2],
            R"(kernodeck_l6_matmul_flops_per_second{dtype="bf16"} 790500000000000)");
  EXPECT_EQ(f.at("kernodeck_l6_ceiling_floor")[2],
            R"(kernodeck_l6_ceiling_floor{ceiling="copy",kind="absolute",source="floors_file"} 3.9)");
  EXPECT_EQ(f.at("kernodeck_l6_ceiling_measurements")[2], R"(kernodeck_l6_ceiling_measurements{ceiling="copy"} 2)");
  EXPECT_EQ(f.at("kernodeck_l8_bus_bandwidth_bytes_per_second")[2],
            R"(kernodeck_l8_bus_bandwidth_bytes_per_second{size_bytes="268435456"} 140500000000)");
  EXPECT_EQ(f.at("kernodeck_l8_bus_bandwidth_floor_bytes_per_second")[2],
            R"(kernodeck_l8_bus_bandwidth_floor_bytes_per_second{source="option"} 150000000000)");
  EXPECT_EQ(f.at("kernodeck_l8_largest_size_bus_bandwidth_bytes_per_second").size(), 4u);  // both measurements
  EXPECT_EQ(f.at("kernodeck_gpu_sm_clock_hertz")[2],
            R"(kernodeck_gpu_sm_clock_hertz{index="0",pci_bus_id="00000000:19:00.0",name="NVIDIA H200"} 1980000000)");
  EXPECT_EQ(f.at("kernodeck_gpu_row_remap_pending")[2],
            R"(kernodeck_gpu_row_remap_pending{index="0",pci_bus_id="00000000:19:00.0",name="NVIDIA H200"} 0)");
  EXPECT_EQ(f.at("kernodeck_xid_lines")[2],
            R"(kernodeck_xid_lines{kind="xid",pci_bus_id="00000000:19:00.0",code="13",unusable="false"} 3)");
  // A device name with a quote and a backslash stays one label value.
  EXPECT_NE(text.find(R"(device="NVIDIA \"H200\"\\ x")"), std::string::npos) << text;
  EXPECT_EQ(f.count("kernodeck_gpu_temperature_celsius"), 1u);
}

TEST(Metrics, LabelValuesAreEscapedAndAbsentFactsLeftOut) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  const auto f = families(render_metrics(json::object()));
  EXPECT_FALSE(f.count("kernodeck_l6_copy_bandwidth_bytes_per_second"));  // no L6: no family, not a zero
  EXPECT_FALSE(f.count("kernodeck_kernel_log_readable"));
  EXPECT_TRUE(f.count("kernodeck_verdict"));
}

}  // namespace
}  // namespace kd
