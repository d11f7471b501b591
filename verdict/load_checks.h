// L6 under load's arithmetic, torch-free and unit-tested (tests/unit/load_checks_test.cpp): what a PCIe link carries,
// the sustained load's steady fraction, and the clock-event reasons that held the clocks.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kd::load {

// GB/s (1e9 bytes/s) one direction of a PCIe link of this generation and width carries after line encoding
// (8b/10b for Gen 1-2, 128b/130b for Gen 3-5, FLIT for Gen 6); nullopt for a generation or width it does not know.
std::optional<double> pcie_gb_s(int64_t generation, int64_t width);

// The host link as NVML reports it (host.nvml.gpus[]) and what L6.host_link expects of it: NVLink-C2C where NVML lists
// C2C links (a Grace Hopper superchip's GPU is attached to its CPU that way), else PCIe at its largest generation and
// width.
struct HostLinkFacts {
  std::optional<int64_t> c2c_links;  // active NVLink-C2C links; null where NVML lists none
  std::optional<double> c2c_gb_s;    // their bandwidth, one direction
  std::optional<int64_t> gen_max, width_max;
};
struct HostLinkExpectation {
  std::optional<std::string> kind;      // "nvlink-c2c" or "pcie"; null when not known
  std::optional<double> expected_gb_s;  // one direction; null: not judged, why_not says why
  std::string why_not;
};
HostLinkExpectation expected_host_link(const HostLinkFacts& f);

// The sustained load's curve (each point's end time and its rate) reduced: the first seconds (the first fifth of the
// load, at least one point, at most 10 s) against its second half, each the median of its points' rates.
struct Steady {
  double first = 0, steady = 0, fraction = 0;
  size_t first_points = 0, steady_points = 0;
};
Steady steady_fraction(const std::vector<double>& t_s, const std::vector<double>& rates, double seconds);

// The reasons NVML gave for holding the clocks, over looks' reason names: each once, in the order first seen, gpu_idle
// left out (an idle GPU is not a held one).
std::vector<std::string> held_reasons(const std::vector<std::vector<std::string>>& looks);

// The message of a sustained load below its floor, naming NVML's reasons ("none given" when NVML gave none or none
// could be read).
std::string sustained_below_floor(const Steady& s, double floor, const std::string& unit,
                                  const std::vector<std::string>& reasons, bool nvml_read);

}  // namespace kd::load
