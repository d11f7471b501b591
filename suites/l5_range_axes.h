// L5's operating range, the processes axis (suites/l5_range_processes.cpp): N worker processes
// (this executable's --kd-range-job mode, runner/range_job.h) run the fixed L4 workload on the same
// device at once. The step itself (suites/l5_range.cpp) runs the sweep and writes the facts.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "fixtures/layer_test.h"
#include "verdict/range_sweep.h"

namespace kd {

class ProcessesAxis {
 public:
  // folder: a private scratch folder for the processes' output; host_fraction: the share of the
  // host's available memory the processes together may use, by the last pass's largest process;
  // device_fraction: the share of the device's total memory they together may hold (on a GPU).
  ProcessesAxis(WorkerContext& ctx, bool gpu, std::string folder, double host_fraction, double device_fraction);
  range::Point run(int64_t n, double seconds_left);
  int64_t max_value() const;

  nlohmann::json processes = nlohmann::json::object();  // per N (as a string): each process' own record
  nlohmann::json limit;  // the first process that ran out of memory: {processes, process, phase, seconds, note}
  Code failure_code = Code::RuntimeError;
  std::optional<uint64_t> device_total;

 private:
  WorkerContext& ctx_;
  bool gpu_;
  std::string folder_;
  double host_fraction_;
  double device_fraction_;
  std::optional<uint64_t> last_rss_;  // the last pass's largest process
};

}  // namespace kd
