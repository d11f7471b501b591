// What a run was asked to do: the options of kernodeck-diagnostic (docs/command-line.md). What a process the tool
// starts is besides (the worker, a job) is its plan's role (contract/run_plan.h).
// Each option is one row of contract/option_table.cpp, which parses it, shows it in --help, records it in
// the report's "requested" and the bundle's command.json, and carries it to the worker. Pure: parsing never
// touches the machine, so every rule is unit-tested.
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "process_role.h"

namespace kd {

inline constexpr double kDefaultTimeout = 30, kMinTimeout = 5, kMaxTimeout = 120;  // --timeout, in seconds
inline constexpr double kDefaultMinBandwidthFraction = 0.6, kDefaultMinMatmulFraction = 0.5;
// L6 under load (docs/layers.md): the host link's pinned copies against NVML's link, the sustained load's steady
// throughput against its first seconds, and the sustained load's bounds in seconds.
inline constexpr double kDefaultMinHostLinkFraction = 0.5, kDefaultMinSustainedFraction = 0.85;
inline constexpr double kMinSustained = 2, kMaxSustained = 3600;
// L5's operating range (README "Layer L5"): the sweep's own time, and the share of the device's memory
// (the caching allocator is capped to it) or, on the CPU, of the host's available memory it may use.
inline constexpr double kDefaultRangeBudget = 20, kDefaultRangeMemoryFraction = 0.9;
// What a run that includes L5 keeps beyond the range budget for LibTorch's load and L1-L3 (and the sweep's last point).
inline constexpr double kRangeTimeoutRoom = 10;

struct Options {
  std::string device = "cuda";  // "cuda" or "cpu"; never falls back silently
  int device_index = 0;
  bool all_devices = false;            // --device-index all (or a list): one worker per GPU, then the peer layer
  std::vector<int> device_list;        // --device-index 0,2: these GPUs only (all_devices is set); empty: every visible one
  double timeout_s = kDefaultTimeout;
  std::optional<std::string> output;   // a new file for the JSON report
  std::optional<std::string> summary_md;  // a new file for the Markdown summary (CI job summaries)
  std::vector<std::string> layers;     // e.g. {"L1","L3"}; empty: the plain run (L1-L3)
  std::vector<std::string> gtest_args; // --gtest_* flags, passed to the worker as given
  bool host_check = false;             // also ask nvidia-smi (informs, never decides)
  bool wait_for_gpu_release = false;   // exit only once the worker released the GPU (CTest's layer tests)
  std::optional<std::string> python;   // also check this interpreter's torch (L1)
  std::optional<std::string> model;    // L4: the user's model (TorchScript or an AOTInductor package)
  std::optional<std::string> input;    // L4: its input spec and output contract (JSON)
  std::vector<std::string> extensions; // L4: custom-operator libraries loaded before the model (--extension, repeatable)
  std::optional<std::string> bundle;   // a new folder for the result bundle
  std::optional<std::string> metrics;  // a new file for the Prometheus metrics (reporters/metrics.h)
  std::optional<std::string> floors;   // the per-SKU floors file (verdict/floors.h), read by the supervisor
  // L6: below these fractions of the device's reference figures a ceiling fails (code 16).
  // Defaults sit well under what healthy cards reach (README "Layer L6").
  double min_bandwidth_fraction = kDefaultMinBandwidthFraction;
  double min_matmul_fraction = kDefaultMinMatmulFraction;
  double min_host_link_fraction = kDefaultMinHostLinkFraction;
  // L6 under load, off unless asked: the sustained load's seconds (added to --timeout), its floor, and the memory pass.
  std::optional<double> sustained_s;
  double min_sustained_fraction = kDefaultMinSustainedFraction;
  bool memory_integrity = false;
  // L6, L8: a measurement during which other processes used the GPU is recorded, not judged (a visible skip); this
  // applies its floor anyway (docs/shared-gpus.md).
  bool judge_shared_gpu = false;
  // L5: "pretend this card is smaller": the caching allocator may hold at most this fraction of the
  // device's memory while L5's workload runs (setMemoryFraction); unset: the whole device.
  std::optional<double> memory_fraction;
  std::string range_axis = "batch";    // L5: the axis that grows: "batch", "length", "concurrency" or "processes"
  double range_budget_s = kDefaultRangeBudget;
  double range_memory_fraction = kDefaultRangeMemoryFraction;
  // L8: where the ranks meet when the environment does not say (fixtures/rendezvous.h); all three together.
  std::optional<std::string> rendezvous;  // rank 0's HOST:PORT
  std::optional<int> world_size, rank;
  double min_bus_bandwidth = 0;        // L8: GB/s of bus bandwidth at the largest message; 0: no floor
  bool full = false;                   // --full: L8 then runs only when this process is one rank of a multi-rank job
  bool device_index_given = false;     // L8 on a GPU uses the job's local rank unless --device-index says
  std::string fault;                   // test-only fault injection; "" when off
  std::optional<std::string> kernel_log_file;  // TEST ONLY: read this file as the kernel log (machine/kernel_log.h)
  bool verbose = false;                // -v: GoogleTest's own output too (by default one line per layer)
  bool quiet = false;                  // -q: the verdict line only
  std::string color = "auto";          // --color auto|always|never (auto: a terminal, and NO_COLOR unset)
  bool version = false;                // --version: what this build is, then exit 0
  bool in_process = false;             // debug: run the tests in this process (no timeout)
  std::vector<std::string> reports;    // aggregate: report files and folders, in the order given
  // Internal: how a process this tool starts learns what it is (contract/run_plan.h); never typed by a user.
  std::optional<std::string> plan;     // --kd-plan FILE: this process's role and options are in that plan
  // --kd-nvml-facts, --kd-nvml-watch: this process is the NVML child in that role (contract/process_role.h)
  ProcessRole flag_role = ProcessRole::Supervisor;
  bool nvml_processes = false;         // --kd-nvml-processes: the NVML child's facts include the compute processes
  bool list_stages = false;            // --kd-list-stages: print every step's stage, in order (for CTest)

  bool cpu_mode() const { return device == "cpu"; }
  bool report_to_stdout() const { return output == std::string("-"); }  // --output -: the human text goes to stderr
  bool has_gtest_flag(const std::string& name) const;  // e.g. "list_tests", "filter"
  std::string gtest_value(const std::string& name) const;
  std::optional<std::string> gtest_output_file() const;  // --gtest_output=xml:FILE's FILE
  bool runs_layer(const std::string& id) const;  // --layers (or --full) names it, or a --gtest_filter may reach it
  // The whole run's limit: --timeout, plus --sustained's seconds when L6 runs (the load's own time is asked for).
  double run_limit_s() const;

};

struct UsageError {
  std::string message;  // names the argument and says why
};
struct HelpRequested {};

using ParseResult = std::variant<Options, UsageError, HelpRequested>;

// known_layers: the layers this build registers ("L1", "L2", ...). "--layers app" means
// L1-L4 (the tiny check, then the application layer); "--full" means every layer.
ParseResult parse_command_line(const std::vector<std::string>& args, const std::vector<std::string>& known_layers);

std::string usage_text();  // --help: the options from the table, the exit codes from verdict/codes

// `kernodeck-diagnostic aggregate`'s arguments (what follows the word), through the table's Aggregate rows: the
// reports in `reports`, and `output`, `summary_md`.
ParseResult parse_aggregate_command_line(const std::vector<std::string>& args);
std::string aggregate_usage_text();

}  // namespace kd
