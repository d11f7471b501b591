#include "option_table.h"

#include <algorithm>
#include <deque>
#include <tuple>

#include <fmt/format.h>

#include "values.h"

namespace kd {

const std::vector<std::string> kFaults = {"wrong-product", "hang", "abort", "oom", "runtime-error", "leak", "range-leak",
                                          "device-assert", "slow-save", "cpu-shards", "cpu-shard-oom", "shard-oom",
                                          "collective-wrong", "collective-rank-exit", "slow-exit", "slow-first-measurement",
                                          "stand-in-gpu", "silent-corruption", "memory-corrupt", "throttle",
                                          "cpu-host-links"};

namespace {

using nlohmann::json;
using Error = std::optional<std::string>;

// The plan's typed value of a member, and back: an unset optional is null.
template <class T>
void member(OptionRow& r, T Options::*m) {
  r.get = [m](const Options& o) { return json(o.*m); };
  r.set = [m](const json& j, Options& o) { o.*m = j.get<T>(); };
}
template <class T>
void member(OptionRow& r, std::optional<T> Options::*m) {
  r.get = [m](const Options& o) { return o.*m ? json(*(o.*m)) : json(); };
  r.set = [m](const json& j, Options& o) {
    if (j.is_null()) (o.*m).reset();
    else o.*m = j.get<T>();
  };
}

template <class T>
OptionRow option(std::string flag, std::string metavar, T Options::*m, std::string key, std::string help) {
  OptionRow r;
  r.flag = std::move(flag);
  r.metavar = std::move(metavar);
  r.key = key;
  r.report_key = key;
  r.help = std::move(help);
  member(r, m);
  return r;
}

// A field of the run plan only: the supervisor or a worker sets it for the process it starts.
template <class T>
OptionRow plan_field(T Options::*m, std::string key) {
  OptionRow r = option("", "", m, std::move(key), "");
  r.audience = Audience::Internal;
  r.report_key.clear();
  return r;
}

void switch_of(OptionRow& r, bool Options::*m) {
  r.read = [m](const std::string&, Options& o) -> Error {
    o.*m = true;
    return std::nullopt;
  };
}

std::string quoted_choices(const std::vector<std::string>& choices) {
  std::string s;
  for (size_t i = 0; i < choices.size(); ++i)
    s += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ", choices[i]);
  return s;
}

auto choice(std::string Options::*m, std::string flag, std::vector<std::string> choices) {
  return [=](const std::string& v, Options& o) -> Error {
    if (std::find(choices.begin(), choices.end(), v) == choices.end())
      return fmt::format("{} must be {}, not '{}'", flag, quoted_choices(choices), v);
    o.*m = v;
    return std::nullopt;
  };
}

// A plain decimal in [lo, hi] (or (lo, hi] when lo is open); `what` completes "FLAG must be ...".
template <class Field>
auto decimal(Field Options::*m, std::string flag, double lo, double hi, bool lo_open, std::string what) {
  return [=](const std::string& v, Options& o) -> Error {
    const auto d = parse_decimal(v);
    if (!d || *d > hi || *d < lo || (lo_open && *d == lo)) return fmt::format("{} must be {}, not '{}'", flag, what, v);
    o.*m = *d;
    return std::nullopt;
  };
}

auto whole_number(std::optional<int> Options::*m, std::string flag, long lo, long hi) {
  return [=](const std::string& v, Options& o) -> Error {
    const auto n = parse_whole(v, hi);
    if (!n || *n < lo) return fmt::format("{} must be a whole number from {} to {}, not '{}'", flag, lo, hi, v);
    o.*m = static_cast<int>(*n);
    return std::nullopt;
  };
}

// A user's path (or interpreter): only that it is not empty; what it names is the layer's to check.
auto path(std::optional<std::string> Options::*m, std::string empty_error) {
  return [=](const std::string& v, Options& o) -> Error {
    if (v.empty()) return empty_error;
    o.*m = v;
    return std::nullopt;
  };
}

// "0,2,3": distinct GPU indices, in the order given.
Error read_device_list(const std::string& v, std::vector<int>* out) {
  out->clear();
  for (const std::string& part : split_commas(v)) {
    const auto n = parse_whole(part, 1023);
    if (!n) return fmt::format("--device-index {}: '{}' is not a GPU index from 0 to 1023", v, part);
    if (std::find(out->begin(), out->end(), *n) != out->end())
      return fmt::format("--device-index {} names GPU {} twice: give each GPU once", v, *n);
    out->push_back(static_cast<int>(*n));
  }
  if (out->size() > 64) return std::string("--device-index: a list of at most 64 GPUs");
  return std::nullopt;
}

Error read_device_index(const std::string& v, Options& o) {
  if (v == "all") {
    o.all_devices = true;  // the supervisor hands each worker one index
  } else if (v.find(',') != std::string::npos) {
    if (auto e = read_device_list(v, &o.device_list)) return e;
    o.all_devices = true;  // as "all", over these GPUs only
  } else if (const auto n = parse_whole(v, 1023)) {
    o.device_index = static_cast<int>(*n);
  } else {
    return fmt::format("--device-index must be a whole number from 0 to 1023, a list of them (0,2), or 'all', not '{}'", v);
  }
  o.device_index_given = true;
  return std::nullopt;
}

std::string device_index_text(const Options& o) {
  if (!o.device_list.empty()) return fmt::format("{}", fmt::join(o.device_list, ","));
  return o.all_devices ? "all" : std::to_string(o.device_index);
}

// GoogleTest's own flags. Only those that choose or show tests pass; those that change the order or the
// number of runs behind a verdict are refused (the order is the contract), and so is anything unknown.
Error read_gtest_flag(const std::string& arg, Options& o) {
  const size_t eq = arg.find('=');
  const std::string name = arg.substr(8, eq == std::string::npos ? std::string::npos : eq - 8);
  const bool has_value = eq != std::string::npos;
  const std::string value = has_value ? arg.substr(eq + 1) : "";
  static const std::vector<std::string> kOrder = {"shuffle", "repeat", "random_seed", "break_on_failure", "throw_on_failure",
                                                  "catch_exceptions", "recreate_environments_when_repeating",
                                                  "also_run_disabled_tests", "flagfile", "stream_result_to",
                                                  "death_test_style", "death_test_use_fork", "fail_if_no_test_suite_linked",
                                                  "install_failure_signal_handler"};
  static const std::vector<std::string> kShow = {"list_tests", "fail_fast", "print_time", "brief", "color"};
  auto among = [&](const std::vector<std::string>& names) { return std::find(names.begin(), names.end(), name) != names.end(); };
  if (arg.back() == '=') return fmt::format("{} needs a value after '='", arg.substr(0, eq));
  if (among(kOrder))
    return fmt::format("--gtest_{} changes how the tests behind a verdict run (their order, number or "
                       "handling): the order is the contract, so it is not accepted",
                       name);
  if (name == "filter" || name == "output") {
    if (!has_value || value.empty()) return fmt::format("--gtest_{} needs a value: --gtest_{}=...", name, name);
    if (name == "output") {
      const size_t colon = value.find(':');
      const std::string kind = value.substr(0, colon), file = colon == std::string::npos ? "" : value.substr(colon + 1);
      if ((kind != "xml" && kind != "json") || file.empty() || file.back() == '/')
        return std::string("--gtest_output must be xml:FILE or json:FILE, naming a new file");
    }
  } else if (!among(kShow)) {
    return fmt::format("unknown GoogleTest flag '{}' (accepted: --gtest_filter=, --gtest_list_tests, "
                       "--gtest_output=xml:FILE|json:FILE, --gtest_fail_fast, --gtest_color=, "
                       "--gtest_print_time=, --gtest_brief=)",
                       arg.substr(0, eq));
  } else if (name == "list_tests" && has_value) {
    return std::string("--gtest_list_tests takes no value");
  }
  o.gtest_args.push_back(arg);
  return std::nullopt;
}

// GoogleTest's flags as given, the output file's name replaced.
json redacted_gtest_flags(const Options& o) {
  json flags = json::array();
  for (const auto& g : o.gtest_args) flags.push_back(g.rfind("--gtest_output", 0) == 0 ? "--gtest_output=<file>" : g);
  return flags;
}

json null_if_empty(const json& v) { return v.empty() ? json() : v; }

std::vector<OptionRow> make_table() {
  std::deque<OptionRow> t;  // a row's reference stays valid while later rows are added
  auto add = [&](OptionRow r) -> OptionRow& { return t.emplace_back(std::move(r)); };

  OptionRow& device = add(option("--device", "cuda|cpu", &Options::device, "device",
                                 "device to check (default cuda; cpu only when asked)"));
  device.read = choice(&Options::device, "--device", {"cuda", "cpu"});
  device.always_in_command = true;
  device.example = "cpu";

  OptionRow& index = add(option("--device-index", "N", &Options::device_index, "device_index",
                                "GPU index among the visible devices (default 0); \"all\":\n"
                                "every visible GPU, one verdict each, then the peer layer\n"
                                "(with L4: its workload also split over all the GPUs);\n"
                                "a list (0,2,3): those GPUs only, the same way"));
  index.read = read_device_index;
  index.report = [](const Options& o) { return o.cpu_mode() || o.all_devices ? json() : json(o.device_index); };
  index.arguments = [](const Options& o) {
    return o.cpu_mode() ? std::vector<std::string>{} : std::vector<std::string>{"--device-index", device_index_text(o)};
  };
  index.example = "3";
  OptionRow& all = add(plan_field(&Options::all_devices, "all_devices"));
  all.report_key = "all_devices";
  OptionRow& list = add(plan_field(&Options::device_list, "device_list"));
  list.report_key = "device_list";
  list.report = [](const Options& o) { return null_if_empty(json(o.device_list)); };
  add(plan_field(&Options::device_index_given, "device_index_given"));

  OptionRow& timeout = add(option("--timeout", "S", &Options::timeout_s, "timeout_s",
                                  "whole-run limit in seconds, 5 to 120 (default 30)"));
  timeout.read = decimal(&Options::timeout_s, "--timeout", kMinTimeout, kMaxTimeout, false,
                         fmt::format("a number of seconds from {} to {}", kMinTimeout, kMaxTimeout));
  timeout.always_in_command = true;
  timeout.example = "12.5";

  OptionRow& output = add(option("--output", "FILE", &Options::output, "output",
                                 "also write the JSON report to FILE, a new file\n"
                                 "(an existing path is never overwritten: exit 12);\n"
                                 "\"-\": the report on stdout, the text on stderr"));
  output.read = path(&Options::output, "--output needs a file name");
  output.report_key = "report_file";
  output.placeholder = "<file>";
  output.to_worker = false;
  output.example = "r.json";

  OptionRow& summary = add(option("--summary-md", "FILE", &Options::summary_md, "summary_md",
                                  "also write a Markdown summary to FILE, a new file (same\n"
                                  "rules as --output), e.g. for $GITHUB_STEP_SUMMARY"));
  summary.read = [](const std::string& v, Options& o) -> Error {
    if (v == "-") return std::string("--summary-md needs a file name: '-' (stdout) is --output's");
    return path(&Options::summary_md, "--summary-md needs a file name")(v, o);
  };
  summary.report_key = "summary_file";
  summary.placeholder = "<file>";
  summary.to_worker = false;
  summary.example = "s.md";

  OptionRow& layers = add(option("--layers", "L1,L3", &Options::layers, "layers",
                                 "run only these layers (or choose tests with --gtest_filter);\n"
                                 "\"app\" means L1-L4: the fixed check, then the application layer"));
  layers.read = [](const std::string& v, Options& o) -> Error {  // checked against the build's layers by the parser
    o.layers = split_commas(v);
    return std::nullopt;
  };
  layers.report = [](const Options& o) { return null_if_empty(json(o.layers)); };
  layers.example = "L1";

  OptionRow& full = add(option("--full", "", &Options::full, "full",
                               "run every layer (L4 to L7 included; L8 when this process\n"
                               "is one rank of a multi-rank job)"));
  switch_of(full, &Options::full);

  OptionRow& model = add(option("--model", "FILE", &Options::model, "model",
                                "L4: also check your model, TorchScript or an AOTInductor\n"
                                "package (.pt2) (implies --layers app)"));
  model.read = path(&Options::model, "--model needs a path");
  model.placeholder = "<file>";
  model.example = "m.pt";
  OptionRow& input = add(option("--input", "SPEC.json", &Options::input, "input",
                                "L4: its inputs (names, shapes, dtypes, ranges) and output contract"));
  input.read = path(&Options::input, "--input needs a path");
  input.placeholder = "<file>";
  input.example = "spec.json";
  OptionRow& ext = add(option("--extension", "FILE", &Options::extensions, "extensions",
                              "L4: load this custom-operator library (what the application loads\n"
                              "with torch.ops.load_library) before the model; repeatable\n"
                              "(implies --layers app)"));
  ext.read = [](const std::string& v, Options& o) -> Error {
    if (v.empty()) return std::string("--extension needs a library file");
    if (std::find(o.extensions.begin(), o.extensions.end(), v) != o.extensions.end())
      return std::string("--extension names the same library twice: give each library once");
    o.extensions.push_back(v);
    return std::nullopt;
  };
  ext.repeatable = true;
  ext.placeholder = "<file>";
  ext.example = "libops.so";

  for (const auto& [flag, m, what] :
       {std::tuple{"--min-bandwidth-fraction", &Options::min_bandwidth_fraction,
                   "L6: fail (16) when the copy bandwidth is below F of the\ndevice's reference figure, 0 to 1 (default 0.6)"},
        std::tuple{"--min-matmul-fraction", &Options::min_matmul_fraction,
                   "L6: the same for the matrix products (default 0.5)"},
        std::tuple{"--min-host-link-fraction", &Options::min_host_link_fraction,
                   "L6: the same for the pinned host<->device copies against the\n"
                   "link NVML reports (PCIe generation x width; default 0.5)"},
        std::tuple{"--min-sustained-fraction", &Options::min_sustained_fraction,
                   "L6: fail (16) when --sustained's steady throughput is below F\n"
                   "of its first seconds' (default 0.85)"}}) {
    OptionRow& r = add(option(flag, "F", m, std::string(flag + 2), what));
    std::replace(r.key.begin(), r.key.end(), '-', '_');
    r.report_key = r.key;
    r.read = decimal(m, flag, 0, 1, false, "a fraction from 0 to 1");
    r.example = "0.25";
  }

  OptionRow& sus = add(option("--sustained", "S", &Options::sustained_s, "sustained_s",
                              "L6: also run matrix products at full occupancy for S seconds,\n"
                              "2 to 3600 (off by default; S is added to --timeout), with\n"
                              "NVML's clocks, temperature and power every 100 ms and every\n"
                              "result compared bitwise with the first (silent corruption: 8)"));
  sus.read = [](const std::string& v, Options& o) -> Error {
    const auto d = parse_decimal(v);
    if (!d || *d < kMinSustained || *d > kMaxSustained)
      return fmt::format("--sustained must be a number of seconds from {} to {}, not '{}'", kMinSustained, kMaxSustained, v);
    o.sustained_s = *d;
    return std::nullopt;
  };
  sus.example = "60";
  OptionRow& integrity = add(option("--memory-integrity", "", &Options::memory_integrity, "memory_integrity",
                                    "L6: also write and read back patterns over at least 90 % of\n"
                                    "the GPU's free memory (off by default; a few seconds; 8 on a\n"
                                    "word read back wrong)"));
  switch_of(integrity, &Options::memory_integrity);

  OptionRow& shared = add(option("--judge-shared-gpu", "", &Options::judge_shared_gpu, "judge_shared_gpu",
                                 "L6, L8: apply the floors also to a measurement during which\n"
                                 "other processes used the GPU (by default it is recorded and\n"
                                 "not judged: a visible skip)"));
  switch_of(shared, &Options::judge_shared_gpu);

  OptionRow& memfrac = add(option("--memory-fraction", "F", &Options::memory_fraction, "memory_fraction",
                                  "L5: let the caching allocator hold at most F of the GPU's\n"
                                  "memory (0 < F <= 1) while L5's workload runs: as on a smaller card"));
  memfrac.read = decimal(&Options::memory_fraction, "--memory-fraction", 0, 1, true, "a fraction above 0 and at most 1");
  memfrac.example = "0.5";
  OptionRow& axis = add(option("--range-axis", "batch|length|concurrency|processes", &Options::range_axis, "range_axis",
                               "L5: the axis the operating range grows (default batch):\n"
                               "the batch, the sequence length, executions at once in one\n"
                               "process, or worker processes at once on the device"));
  axis.read = choice(&Options::range_axis, "--range-axis", {"batch", "length", "concurrency", "processes"});
  axis.example = "length";
  OptionRow& budget = add(option("--range-budget", "S", &Options::range_budget_s, "range_budget_s",
                                 "L5: the range sweep's time, 1 to 110 s (default 20); a run\n"
                                 "with L5 needs --timeout of at least S + 10"));
  budget.read = decimal(&Options::range_budget_s, "--range-budget", 1, kMaxTimeout - kRangeTimeoutRoom, false,
                        fmt::format("a number of seconds from 1 to {}", kMaxTimeout - kRangeTimeoutRoom));
  budget.example = "3";
  OptionRow& rmem = add(option("--range-memory-fraction", "F", &Options::range_memory_fraction, "range_memory_fraction",
                               "L5: the share of the GPU's memory the sweep may use (the\n"
                               "allocator is capped to it), or on the CPU of the host's\n"
                               "available memory, above 0 and at most 1 (default 0.9)"));
  rmem.read = decimal(&Options::range_memory_fraction, "--range-memory-fraction", 0, 1, true,
                      "a fraction above 0 and at most 1");
  rmem.example = "0.000001";

  OptionRow& rdv = add(option("--rendezvous", "HOST:PORT", &Options::rendezvous, "rendezvous",
                              "L8: where this rank of a job meets the others (rank 0's\n"
                              "address); without them L8 reads torchrun's, Slurm's or a\n"
                              "Kubernetes Indexed Job's environment (docs/fleets.md)"));
  rdv.help_label = "--rendezvous HOST:PORT, --world-size N, --rank R";
  rdv.read = [](const std::string& v, Options& o) -> Error {
    if (!parse_host_port(v)) return fmt::format("--rendezvous must be HOST:PORT (an IPv6 address in brackets), not '{}'", v);
    o.rendezvous = v;
    return std::nullopt;
  };
  rdv.placeholder = "<host:port>";  // never the address
  rdv.example = "10.0.0.1:29500";
  OptionRow& world = add(option("--world-size", "N", &Options::world_size, "world_size", ""));
  world.read = whole_number(&Options::world_size, "--world-size", 1, 65536);
  world.example = "4";
  OptionRow& rank = add(option("--rank", "R", &Options::rank, "rank", ""));
  rank.read = whole_number(&Options::rank, "--rank", 0, 65535);
  rank.example = "1";
  OptionRow& bus = add(option("--min-bus-bandwidth", "G", &Options::min_bus_bandwidth, "min_bus_bandwidth",
                              "L8: fail (16) when the all-reduce's bus bandwidth at its\n"
                              "largest size is below G GB/s (default 0: no floor)"));
  bus.read = decimal(&Options::min_bus_bandwidth, "--min-bus-bandwidth", 0, 100000, false, "a number of GB/s from 0 to 100000");
  bus.example = "100";

  OptionRow& floors = add(option("--floors", "FILE", &Options::floors, "floors",
                                 "L6 and L8: per-SKU floors by device name (JSON: copy_tb_s,\n"
                                 "matmul_bf16/fp32/tf32_tflops, bus_bandwidth_gb_s), absolute\n"
                                 "figures that override the fractions and --min-bus-bandwidth\n"
                                 "for that device (docs/fleets.md); checked before anything runs"));
  floors.read = path(&Options::floors, "--floors needs a file");
  floors.placeholder = "<file>";
  floors.to_worker = false;  // the worker gets the checked table in its plan (contract/run_plan.h)
  floors.example = "floors.json";

  OptionRow& bundle = add(option("--bundle", "DIR", &Options::bundle, "bundle",
                                 "also write the result bundle into DIR, a new folder (exit 12 if it exists)"));
  bundle.read = path(&Options::bundle, "--bundle needs a path");
  bundle.placeholder = "<folder>";
  bundle.to_worker = false;
  bundle.example = "run-bundle";
  OptionRow& metrics = add(option("--metrics", "FILE", &Options::metrics, "metrics",
                                  "also write the verdict, each layer's result, L6's and L8's\n"
                                  "figures and the health facts as Prometheus metrics to FILE,\n"
                                  "a new file (same rules as --output; docs/fleets.md)"));
  metrics.read = [](const std::string& v, Options& o) -> Error {
    if (v == "-") return std::string("--metrics needs a file name: '-' (stdout) is --output's");
    return path(&Options::metrics, "--metrics needs a file name")(v, o);
  };
  metrics.report_key = "metrics_file";
  metrics.placeholder = "<file>";
  metrics.to_worker = false;
  metrics.example = "m.prom";
  OptionRow& host = add(option("--host-check", "", &Options::host_check, "host_check",
                               "also report what nvidia-smi and NVML see: driver, memory, and\n"
                               "each GPU's health facts (ECC, PCIe, clocks; at most 3 s), and show\n"
                               "the machine around the GPU (limits, container, /dev/shm, driver)"));
  switch_of(host, &Options::host_check);
  host.to_worker = false;
  OptionRow& release = add(option("--wait-for-gpu-release", "", &Options::wait_for_gpu_release, "wait_for_gpu_release",
                                  "exit only once the worker has released the GPU (automatic when\n"
                                  "the GPU's compute mode is not default; CTest's layer tests set it)"));
  switch_of(release, &Options::wait_for_gpu_release);
  release.to_worker = false;
  OptionRow& python = add(option("--python", "PATH", &Options::python, "python",
                                 "also check that this interpreter imports torch (layer L1)"));
  python.read = path(&Options::python, "--python needs an interpreter (a path, or a name on PATH)");
  python.placeholder = "<interpreter>";
  python.example = "python3";
  OptionRow& inproc = add(option("--in-process", "", &Options::in_process, "in_process",
                                 "debug: run the tests in this process (no timeout guard)"));
  switch_of(inproc, &Options::in_process);
  inproc.to_worker = false;

  OptionRow& fault = add(option("--inject-fault", "KIND", &Options::fault, "fault",
                                "TEST ONLY: wrong-product, hang, abort, oom, runtime-error,\n"
                                "leak (L5's workload keeps every loss tensor), range-leak (L5, GPU),\n"
                                "device-assert (L4: --model's run reads as a GPU's device-side\n"
                                "assert, so that its CPU re-run is exercised without a GPU),\n"
                                "slow-save (a 3 s pause between the bundle and the report),\n"
                                "cpu-shards / cpu-shard-oom (L4 across devices split over three\n"
                                "CPU processes; the second runs out of memory), shard-oom (the\n"
                                "second GPU's shard runs out of memory), collective-wrong (L8:\n"
                                "the last rank adds 1 to one element), collective-rank-exit\n"
                                "(L8: the last rank is killed right after joining), slow-exit\n"
                                "(the worker stays 4.5 s after its last event), slow-first-measurement\n"
                                "(L6's ceilings and L8's bus bandwidth: the first measurement\n"
                                "reads 100 times slower, as a throttled card's would), stand-in-gpu\n"
                                "(a CPU run watches the stand-in NVML's GPU 0 as its GPU: L5's\n"
                                "sweep sizes itself from its free memory, L6's segments and\n"
                                "L8's bandwidth see its other processes), silent-corruption\n"
                                "(L6 --sustained: one product's result has a bit flipped),\n"
                                "memory-corrupt (L6 --memory-integrity: one word of one chunk\n"
                                "has a bit flipped), throttle (L6 --sustained: the throughput\n"
                                "after the first seconds reads 100 times lower, as a throttled\n"
                                "card's would, and a CPU run watches the stand-in NVML's GPU 0),\n"
                                "cpu-host-links (L6: the host links of all GPUs at once, over\n"
                                "three threads as if three GPUs: on a GPU, its link three times);\n"
                                "recorded in the report, never a diagnosis"));
  fault.audience = Audience::TestOnly;
  fault.read = [](const std::string& v, Options& o) -> Error {
    if (std::find(kFaults.begin(), kFaults.end(), v) == kFaults.end())
      return fmt::format("--inject-fault must be one of {}, not '{}'", fmt::join(kFaults, ", "), v);
    o.fault = v;
    return std::nullopt;
  };
  fault.report_key = "fault_injection";
  fault.report = [](const Options& o) { return o.fault.empty() ? json() : json(o.fault); };
  fault.example = "hang";

  OptionRow& klog = add(option("--kernel-log-file", "FILE", &Options::kernel_log_file, "kernel_log_file",
                               "TEST ONLY: read FILE as this boot's kernel log (its /dev/kmsg\n"
                               "records or \"[seconds] ...\" lines) for the Xid evidence in\n"
                               "host.kernel_log; recorded in the report, never a diagnosis"));
  klog.audience = Audience::TestOnly;
  klog.read = path(&Options::kernel_log_file, "--kernel-log-file needs a file");
  klog.placeholder = "<file>";
  klog.example = "kmsg.log";

  OptionRow& verbose = add(option("--verbose", "", &Options::verbose, "verbose",
                                  "also show GoogleTest's own output (by default: one line per layer)"));
  verbose.alias = "-v";
  verbose.help_label = "-v, --verbose";
  switch_of(verbose, &Options::verbose);
  OptionRow& quiet = add(option("--quiet", "", &Options::quiet, "quiet",
                                "show the verdict line only (the exit code is the same)"));
  quiet.alias = "-q";
  quiet.help_label = "-q, --quiet";
  switch_of(quiet, &Options::quiet);
  quiet.to_worker = false;
  OptionRow& color = add(option("--color", "WHEN", &Options::color, "color",
                                "auto (a terminal, unless NO_COLOR is set), always or never"));
  color.read = choice(&Options::color, "--color", {"auto", "always", "never"});
  color.to_worker = false;
  color.example = "never";
  OptionRow& version = add(option("--version", "", &Options::version, "",
                                  "what this build is: the suite, the LibTorch it was built against"));
  switch_of(version, &Options::version);
  version.to_worker = false;
  OptionRow help;  // the parser answers it before any other row (a value is never a request for help)
  help.flag = "--help";
  help.alias = "-h";
  help.help_label = "-h, --help";
  help.help = "this text";
  add(help);

  OptionRow& gtest = add(option("--gtest_*", "", &Options::gtest_args, "gtest_args",
                                "GoogleTest's flags that choose or show tests, passed as given:\n"
                                "--gtest_filter=, --gtest_list_tests, --gtest_output=xml:FILE\n"
                                "(or json:FILE), --gtest_fail_fast, --gtest_color=,\n"
                                "--gtest_print_time=, --gtest_brief="));
  gtest.help_label = "--gtest_FLAG[=VALUE]";
  gtest.repeatable = true;  // one row for the family; each flag is still given once
  gtest.read = read_gtest_flag;
  gtest.report_key = "gtest_flags";
  gtest.report = redacted_gtest_flags;
  gtest.arguments = [](const Options& o) { return redacted_gtest_flags(o).get<std::vector<std::string>>(); };
  gtest.example = "--gtest_filter=Layer1*";
  OptionRow& filter = add(plan_field(&Options::gtest_args, "gtest_filter"));  // requested's own view of one flag
  filter.key.clear();
  filter.report_key = "gtest_filter";
  filter.report = [](const Options& o) { return o.gtest_value("filter").empty() ? json() : json(o.gtest_value("filter")); };

  // Internal: what a process started by this tool is (contract/run_plan.h).
  OptionRow& plan = add(option("--kd-plan", "FILE", &Options::plan, "", ""));
  plan.audience = Audience::Internal;
  plan.report_key.clear();
  plan.to_worker = false;
  plan.read = [](const std::string& v, Options& o) -> Error {
    if (v.empty() || v[0] != '/') return std::string("--kd-plan is internal: this tool starts its own processes with it");
    o.plan = v;
    return std::nullopt;
  };
  // The NVML child: its two roles, each chosen by its flag (contract/process_role.h), and what its facts include.
  for (const auto& role : {std::pair{"--kd-nvml-facts", ProcessRole::NvmlFacts}, std::pair{"--kd-nvml-watch", ProcessRole::NvmlWatch}}) {
    OptionRow& nvml = add(option(role.first, "", &Options::flag_role, "", ""));
    nvml.audience = Audience::Internal;
    nvml.report_key.clear();
    nvml.to_worker = false;
    nvml.read = [kind = role.second](const std::string&, Options& o) -> Error {
      o.flag_role = kind;
      return std::nullopt;
    };
  }
  OptionRow& processes = add(option("--kd-nvml-processes", "", &Options::nvml_processes, "", ""));
  processes.audience = Audience::Internal;
  processes.report_key.clear();
  processes.to_worker = false;
  switch_of(processes, &Options::nvml_processes);
  // CTest's conformance tests ask which stages the layers have (ctest/conformance_tests.cmake), from the one list.
  OptionRow& stages = add(option("--kd-list-stages", "", &Options::list_stages, "", ""));
  stages.audience = Audience::Internal;
  stages.report_key.clear();
  stages.to_worker = false;
  switch_of(stages, &Options::list_stages);

  // `kernodeck-diagnostic aggregate`: the reports it reads, and the new files it may write (docs/fleets.md).
  OptionRow& reports = add(option("", "REPORT|FOLDER...", &Options::reports, "",
                                  "JSON reports of kernodeck-diagnostic --output, or folders:\n"
                                  "a FOLDER stands for the *.json files directly in it"));
  reports.command = Command::Aggregate;
  reports.operand = true;
  reports.to_worker = false;
  reports.read = [](const std::string& v, Options& o) -> Error {
    o.reports.push_back(v);
    return std::nullopt;
  };
  OptionRow& aggregate_output = add(option("--output", "FILE", &Options::output, "",
                                           "also write the aggregate as JSON to FILE, a new file"));
  aggregate_output.command = Command::Aggregate;
  aggregate_output.to_worker = false;
  aggregate_output.read = path(&Options::output, "--output needs a file name");
  OptionRow& aggregate_md = add(option("--summary-md", "FILE", &Options::summary_md, "",
                                       "also write it as Markdown to FILE, a new file"));
  aggregate_md.command = Command::Aggregate;
  aggregate_md.to_worker = false;
  aggregate_md.read = path(&Options::summary_md, "--summary-md needs a file name");
  OptionRow aggregate_help = help;
  aggregate_help.command = Command::Aggregate;
  aggregate_help.to_worker = false;
  add(aggregate_help);

  // Defaults: requested keeps a placeholder's presence (or count), else the value; command.json the option as typed.
  for (OptionRow& r : t) {
    if (!r.get) continue;  // --help
    if (!r.report)
      r.report = [get = r.get, placeholder = r.placeholder, repeatable = r.repeatable](const Options& o) -> json {
        const json v = get(o);
        if (placeholder.empty()) return v;
        return repeatable ? json(v.size()) : json(!v.is_null());
      };
    if (!r.arguments && !r.flag.empty() && r.command == Command::Diagnostic)
      r.arguments = [get = r.get, flag = r.flag, placeholder = r.placeholder, repeatable = r.repeatable,
                     always = r.always_in_command](const Options& o) {
        std::vector<std::string> a;
        const json v = get(o);
        if (!always && v == get(Options{})) return a;
        if (v.is_boolean()) return std::vector<std::string>{flag};
        for (const json& e : v.is_array() && repeatable ? v : json::array({v})) {
          a.push_back(flag);
          a.push_back(!placeholder.empty() ? placeholder
                      : e.is_string()        ? e.get<std::string>()
                      : e.is_array()         ? fmt::format("{}", fmt::join(e.get<std::vector<std::string>>(), ","))
                      : e.is_number_integer() ? std::to_string(e.get<long>())
                                              : plain_decimal(e.get<double>()));
        }
        return a;
      };
  }
  return {t.begin(), t.end()};
}

}  // namespace

const std::vector<OptionRow>& option_table() {
  static const std::vector<OptionRow> table = make_table();
  return table;
}

const OptionRow* find_option(const std::string& flag, Command command) {
  for (const OptionRow& r : option_table())
    if (r.command == command && !flag.empty() && (r.flag == flag || r.alias == flag)) return &r;
  return nullptr;
}

const OptionRow* operand_row(Command command) {
  for (const OptionRow& r : option_table())
    if (r.command == command && r.operand) return &r;
  return nullptr;
}

json requested_options(const Options& o) {
  json requested = json::object();
  for (const OptionRow& r : option_table())
    if (!r.report_key.empty()) requested[r.report_key] = r.report(o);
  return requested;
}

std::vector<std::string> command_arguments(const Options& o) {
  std::vector<std::string> a = {"kernodeck-diagnostic"};
  for (const OptionRow& r : option_table())
    if (r.arguments && r.audience != Audience::Internal && r.command == Command::Diagnostic)
      for (auto& s : r.arguments(o)) a.push_back(std::move(s));
  return a;
}

}  // namespace kd
