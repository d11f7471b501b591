// The operating range as a picture (operating_range.svg in the bundle): two panels sharing a
// log2 x-axis, the warm median latency above and the memory below, the first failure marked.
// Written directly: no plotting dependency. Pure, so the tests check the XML and its numbers.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

// range: the report's /memory/range. "" when it holds no point that ran.
std::string range_svg(const nlohmann::json& range);

// L6's sustained load (sustained_load.svg in the bundle): throughput, NVML's SM clock, and temperature and power over
// the load's seconds, one panel each on a linear time axis. s: the report's /timing/sustained; "" without a curve.
std::string sustained_svg(const nlohmann::json& s);

}  // namespace kd
