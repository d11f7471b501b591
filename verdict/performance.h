// Layer L6's arithmetic, torch-free and unit-tested: summaries of repeated timings and the
// comparison of a measured figure with its reference and the run's floor.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kd::perf {

double median(std::vector<double> v);  // 0 for an empty set
double p95(std::vector<double> v);     // nearest rank; 0 for an empty set
double round3(double x);               // to three decimals, as the report gives times

struct Judged {
  std::optional<double> fraction;  // measured / reference; nullopt without a reference
  bool below_floor = false;
  std::string message;  // "copy 1.2 TB/s is 0.25 of the H200's 4.8 TB/s, below the floor 0.6"
};

// what: "copy", "bf16 matmul"; device: the reference's key ("H200"); unit: "TB/s", "TFLOP/s".
Judged judge(const std::string& what, double measured, std::optional<double> reference, double floor,
             const std::string& unit, const std::string& device);

// A ceiling's floor: a fraction of its reference figure, or an absolute figure in its unit (a --floors file's,
// verdict/floors.h), and where it came from: "default", "option" or "floors_file".
struct Floor {
  double value = 0;
  bool absolute = false;
  std::string source = "default";
};
// As above, against either kind of floor: an absolute floor judges the figure itself, with or without a reference.
Judged judge(const std::string& what, double measured, std::optional<double> reference, const Floor& floor,
             const std::string& unit, const std::string& device);

}  // namespace kd::perf
