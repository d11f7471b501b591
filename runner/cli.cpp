#include "cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "rendezvous.h"

namespace kd {

const std::vector<std::string> kFaults = {"wrong-product", "hang", "abort", "oom", "runtime-error", "leak", "range-leak", "device-assert", "slow-save",
                                           "cpu-shards", "cpu-shard-oom", "shard-oom", "collective-wrong", "collective-rank-exit"};

namespace {

constexpr double kMinTimeout = 5, kMaxTimeout = 120;

bool is_digit(char c) { return c >= '0' && c <= '9'; }  // ASCII only, whatever the locale

bool parse_int(const std::string& s, long max, long* out) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), is_digit)) return false;
  *out = std::strtol(s.c_str(), nullptr, 10);
  return *out <= max;
}

// Plain decimal seconds ("12", "12.5"): strtod alone would also take " 12", "+12", "1e1" and "0x10".
bool parse_seconds(const std::string& s, double* out) {
  const size_t dot = s.find('.');
  const std::string whole = s.substr(0, dot), frac = dot == std::string::npos ? "1" : s.substr(dot + 1);
  if (whole.empty() || whole.size() > 9 || frac.empty() || frac.size() > 9) return false;
  if (!std::all_of(whole.begin(), whole.end(), is_digit) || !std::all_of(frac.begin(), frac.end(), is_digit))
    return false;
  *out = std::strtod(s.c_str(), nullptr);
  return std::isfinite(*out);
}

// The form parse_seconds reads back as the same double: every accepted value has at most 9 decimals,
// and "{}" would print 0.000001 as "1e-06", which the worker's own parse would refuse.
std::string plain_decimal(double v) {
  std::string s = fmt::format("{:.9f}", v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

// An option with two possible words: "--device must be 'cuda' or 'cpu', not 'gpu'".
std::optional<UsageError> check_either(const std::string& arg, const std::string& v, const char* a, const char* b) {
  if (v == a || v == b) return std::nullopt;
  return UsageError{fmt::format("{} must be '{}' or '{}', not '{}'", arg, a, b, v)};
}

// "--gtest_filter=X" -> "--gtest_filter"; "--device=cpu" -> "--device".
std::string option_name(const std::string& arg) { return arg.substr(0, arg.find('=')); }

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// "app" stands for L1-L4: the fixed check first, then the application layer.
std::vector<std::string> expand_app(const std::vector<std::string>& ids, const std::vector<std::string>& known) {
  std::vector<std::string> out;
  for (const auto& id : ids) {
    if (id != "app") {
      out.push_back(id);
      continue;
    }
    for (const char* l : {"L1", "L2", "L3", "L4"})
      if (std::find(known.begin(), known.end(), l) != known.end()) out.push_back(l);
    if (std::find(known.begin(), known.end(), "L4") == known.end()) out.push_back("L4");  // unknown: a usage error
  }
  return out;
}

// GoogleTest's own flags. Only those that choose or show tests pass; those that change the order or the
// number of runs behind a verdict are refused (the order is the contract), and so is anything unknown.
std::optional<UsageError> check_gtest_flag(const std::string& arg) {
  const size_t eq = arg.find('=');
  const std::string name = arg.substr(8, eq == std::string::npos ? std::string::npos : eq - 8);
  const bool has_value = eq != std::string::npos;
  const std::string value = has_value ? arg.substr(eq + 1) : "";
  static const std::set<std::string> kOrder = {"shuffle", "repeat", "random_seed", "break_on_failure", "throw_on_failure",
                                               "catch_exceptions", "recreate_environments_when_repeating",
                                               "also_run_disabled_tests", "flagfile", "stream_result_to",
                                               "death_test_style", "death_test_use_fork", "fail_if_no_test_suite_linked",
                                               "install_failure_signal_handler"};
  if (kOrder.count(name))
    return UsageError{fmt::format("--gtest_{} changes how the tests behind a verdict run (their order, number or "
                                  "handling): the order is the contract, so it is not accepted",
                                  name)};
  if (name == "filter" || name == "output") {
    if (!has_value || value.empty()) return UsageError{fmt::format("--gtest_{} needs a value: --gtest_{}=...", name, name)};
    if (name == "output") {
      const size_t colon = value.find(':');
      const std::string kind = value.substr(0, colon), file = colon == std::string::npos ? "" : value.substr(colon + 1);
      if ((kind != "xml" && kind != "json") || file.empty() || file.back() == '/')
        return UsageError{"--gtest_output must be xml:FILE or json:FILE, naming a new file"};
    }
    return std::nullopt;
  }
  if (name == "list_tests" || name == "fail_fast" || name == "print_time" || name == "brief" || name == "color") {
    if (name == "list_tests" && has_value) return UsageError{"--gtest_list_tests takes no value"};
    return std::nullopt;
  }
  return UsageError{fmt::format("unknown GoogleTest flag '{}' (accepted: --gtest_filter=, --gtest_list_tests, "
                                "--gtest_output=xml:FILE|json:FILE, --gtest_fail_fast, --gtest_color=, "
                                "--gtest_print_time=, --gtest_brief=)",
                                option_name(arg))};
}

// "0,2,3": two or more distinct GPU indices, in the order given.
std::optional<UsageError> parse_device_list(const std::string& v, std::vector<int>* out) {
  out->clear();
  for (const std::string& part : split_commas(v)) {
    long n = 0;
    if (!parse_int(part, 1023, &n))
      return UsageError{fmt::format("--device-index {}: '{}' is not a GPU index from 0 to 1023", v, part)};
    if (std::find(out->begin(), out->end(), n) != out->end())
      return UsageError{fmt::format("--device-index {} names GPU {} twice: give each GPU once", v, n)};
    out->push_back(static_cast<int>(n));
  }
  if (out->size() > 64) return UsageError{"--device-index: a list of at most 64 GPUs"};
  return std::nullopt;
}

// L8's options: the rendezvous's three go together, and each needs L8 in the run.
std::optional<UsageError> check_collective(const Options& o) {
  const int given = o.rendezvous.has_value() + o.world_size.has_value() + o.rank.has_value();
  if (given != 0 && given != 3)
    return UsageError{"--rendezvous, --world-size and --rank go together: rank 0's HOST:PORT, the number of ranks, "
                      "and this process's rank"};
  if (o.rank && *o.rank >= *o.world_size)
    return UsageError{fmt::format("--rank {} is not a rank of --world-size {}: ranks go from 0 to {}", *o.rank,
                                  *o.world_size, *o.world_size - 1)};
  const bool l8 = std::find(o.layers.begin(), o.layers.end(), "L8") != o.layers.end() || o.has_gtest_flag("filter");
  if ((given || o.min_bus_bandwidth > 0) && !l8)
    return UsageError{fmt::format("{} acts in the collective layer: add --layers L8 (or --full)",
                                  given ? "--rendezvous" : "--min-bus-bandwidth")};
  const bool collective_fault = o.fault == "collective-wrong" || o.fault == "collective-rank-exit";
  if (collective_fault && !l8)
    return UsageError{fmt::format("--inject-fault {} acts in the collective layer: add --layers L8", o.fault)};
  return std::nullopt;
}

// The options that take the next argument as their value (when not given as --opt=VALUE).
bool takes_value(const std::string& arg) {
  static const std::set<std::string> k = {"--device", "--range-axis", "--device-index", "--timeout", "--output",
                                          "--summary-md", "--layers", "--model", "--input", "--bundle",
                                          "--min-bandwidth-fraction", "--min-matmul-fraction", "--memory-fraction",
                                          "--range-memory-fraction", "--range-budget", "--inject-fault", "--kd-worker-fd",
                                          "--kd-batch-job", "--kd-range-job", "--kd-shard-job", "--kd-run-id", "--python", "--extension",
                                          "--color", "--rendezvous", "--world-size", "--rank", "--min-bus-bandwidth",
                                          "--kd-devices"};
  return k.count(arg) > 0;
}

}  // namespace

std::optional<std::string> Options::gtest_output_file() const {
  const std::string v = gtest_value("output");
  if (v.empty()) return std::nullopt;
  return v.substr(v.find(':') + 1);
}

bool Options::has_gtest_flag(const std::string& n) const {
  const std::string flag = "--gtest_" + n;
  return std::any_of(gtest_args.begin(), gtest_args.end(),
                     [&](const std::string& a) { return a == flag || a.rfind(flag + "=", 0) == 0; });
}

std::string Options::gtest_value(const std::string& n) const {
  const std::string prefix = "--gtest_" + n + "=";
  std::string value;
  for (const auto& a : gtest_args)
    if (a.rfind(prefix, 0) == 0) value = a.substr(prefix.size());
  return value;
}

ParseResult parse_command_line(const std::vector<std::string>& args, const std::vector<std::string>& known_layers) {
  Options o;
  bool layers_given = false, full = false;
  for (size_t i = 0; i < args.size(); ++i)  // "--output -h" names a file: a value is never a request for help
    if (args[i] == "--help" || (args[i] == "-h" && (i == 0 || !takes_value(args[i - 1])))) return HelpRequested{};
  // An option given twice is a mistake to point out, not a guess at which one was meant (--extension repeats).
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.rfind("--", 0) == 0 && arg.size() > 2 && option_name(arg) != "--extension" &&
        !seen.insert(option_name(arg)).second)
      return UsageError{fmt::format("{} is given more than once: give it once", option_name(arg))};
    if (arg.rfind("--gtest_", 0) == 0) {
      if (arg.back() == '=') return UsageError{fmt::format("{} needs a value after '='", option_name(arg))};
      if (auto e = check_gtest_flag(arg)) return *e;
      o.gtest_args.push_back(arg);
      continue;
    }
    std::optional<std::string> inline_value;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto value = [&](std::string* out) -> std::optional<UsageError> {
      if (inline_value) {
        *out = *inline_value;
      } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {  // "--output --in-process" is a mistake
        *out = args[++i];
      } else {
        return UsageError{fmt::format("{} needs a value", arg)};
      }
      return std::nullopt;
    };
    std::string v;
    if (arg == "--device") {
      if (auto e = value(&v)) return *e;
      if (auto e = check_either(arg, v, "cuda", "cpu")) return *e;
      o.device = v;
    } else if (arg == "--range-axis") {
      if (auto e = value(&v)) return *e;
      if (v != "batch" && v != "length" && v != "concurrency" && v != "processes")
        return UsageError{fmt::format("--range-axis must be 'batch', 'length', 'concurrency' or 'processes', not '{}'", v)};
      o.range_axis = v;
    } else if (arg == "--device-index") {
      if (auto e = value(&v)) return *e;
      long n = 0;
      if (v == "all") {
        o.all_devices = true;  // the supervisor hands each worker one index
      } else if (v.find(',') != std::string::npos) {
        if (auto e = parse_device_list(v, &o.device_list)) return *e;
        o.all_devices = true;  // as "all", over these GPUs only
      } else if (!parse_int(v, 1023, &n)) {
        return UsageError{fmt::format("--device-index must be a whole number from 0 to 1023, a list of them (0,2), or "
                                      "'all', not '{}'", v)};
      }
      o.device_index = static_cast<int>(n);
      o.device_index_given = true;
    } else if (arg == "--rendezvous") {
      if (auto e = value(&v)) return *e;
      if (!parse_host_port(v))
        return UsageError{fmt::format("--rendezvous must be HOST:PORT (an IPv6 address in brackets), not '{}'", v)};
      o.rendezvous = v;
    } else if (arg == "--world-size" || arg == "--rank") {
      if (auto e = value(&v)) return *e;
      long n = 0;
      if (!parse_int(v, arg == "--rank" ? 65535 : 65536, &n) || (arg == "--world-size" && n < 1))
        return UsageError{fmt::format("{} must be a whole number from {} to {}, not '{}'", arg,
                                      arg == "--rank" ? 0 : 1, arg == "--rank" ? 65535 : 65536, v)};
      (arg == "--rank" ? o.rank : o.world_size) = static_cast<int>(n);
    } else if (arg == "--min-bus-bandwidth") {
      if (auto e = value(&v)) return *e;
      double g = 0;
      if (!parse_seconds(v, &g) || g > 100000)
        return UsageError{fmt::format("--min-bus-bandwidth must be a number of GB/s from 0 to 100000, not '{}'", v)};
      o.min_bus_bandwidth = g;
    } else if (arg == "--timeout") {
      if (auto e = value(&v)) return *e;
      double t = 0;
      if (!parse_seconds(v, &t) || t < kMinTimeout || t > kMaxTimeout)
        return UsageError{fmt::format("--timeout must be a number of seconds from {} to {}, not '{}'", kMinTimeout,
                                      kMaxTimeout, v)};
      o.timeout_s = t;
    } else if (arg == "--output" || arg == "--summary-md") {
      if (auto e = value(&v)) return *e;
      if (v.empty()) return UsageError{fmt::format("{} needs a file name", arg)};
      if (v == "-" && arg == "--summary-md") return UsageError{"--summary-md needs a file name: '-' (stdout) is --output's"};
      (arg == "--output" ? o.output : o.summary_md) = v;
    } else if (arg == "--layers") {
      if (auto e = value(&v)) return *e;
      o.layers.clear();
      for (const auto& l : expand_app(split_commas(v), known_layers)) {
        if (std::find(known_layers.begin(), known_layers.end(), l) == known_layers.end())
          return UsageError{fmt::format("--layers: unknown layer '{}' (this build has: {})", l,
                                        fmt::join(known_layers, ", "))};
        if (std::find(o.layers.begin(), o.layers.end(), l) == o.layers.end()) o.layers.push_back(l);
      }
      layers_given = true;
    } else if (arg == "--full") {
      if (inline_value) return UsageError{"--full takes no value"};
      full = true;
    } else if (arg == "--model" || arg == "--input" || arg == "--bundle") {
      if (auto e = value(&v)) return *e;
      if (v.empty()) return UsageError{fmt::format("{} needs a path", arg)};
      (arg == "--model" ? o.model : arg == "--input" ? o.input : o.bundle) = v;
    } else if (arg == "--extension") {
      if (auto e = value(&v)) return *e;
      if (v.empty()) return UsageError{"--extension needs a library file"};
      if (std::find(o.extensions.begin(), o.extensions.end(), v) != o.extensions.end())
        return UsageError{"--extension names the same library twice: give each library once"};
      o.extensions.push_back(v);
    } else if (arg == "--min-bandwidth-fraction" || arg == "--min-matmul-fraction") {
      if (auto e = value(&v)) return *e;
      double f = 0;
      if (!parse_seconds(v, &f) || f < 0 || f > 1)
        return UsageError{fmt::format("{} must be a fraction from 0 to 1, not '{}'", arg, v)};
      (arg == "--min-bandwidth-fraction" ? o.min_bandwidth_fraction : o.min_matmul_fraction) = f;
    } else if (arg == "--memory-fraction" || arg == "--range-memory-fraction") {
      if (auto e = value(&v)) return *e;
      double f = 0;
      if (!parse_seconds(v, &f) || f <= 0 || f > 1)
        return UsageError{fmt::format("{} must be a fraction above 0 and at most 1, not '{}'", arg, v)};
      if (arg == "--memory-fraction")
        o.memory_fraction = f;
      else
        o.range_memory_fraction = f;
    } else if (arg == "--range-budget") {
      if (auto e = value(&v)) return *e;
      double t = 0;
      if (!parse_seconds(v, &t) || t < 1 || t > kMaxTimeout - kRangeTimeoutRoom)
        return UsageError{fmt::format("--range-budget must be a number of seconds from 1 to {}, not '{}'",
                                      kMaxTimeout - kRangeTimeoutRoom, v)};
      o.range_budget_s = t;
    } else if (arg == "--inject-fault") {
      if (auto e = value(&v)) return *e;
      if (std::find(kFaults.begin(), kFaults.end(), v) == kFaults.end())
        return UsageError{fmt::format("--inject-fault must be one of {}, not '{}'", fmt::join(kFaults, ", "), v)};
      o.fault = v;
    } else if (arg == "--in-process") {
      if (inline_value) return UsageError{"--in-process takes no value"};
      o.in_process = true;
    } else if (arg == "--kd-worker-fd") {
      if (auto e = value(&v)) return *e;
      long n = 0;
      if (!parse_int(v, 65535, &n)) return UsageError{"--kd-worker-fd is internal"};
      o.worker_fd = static_cast<int>(n);
    } else if (arg == "--kd-batch-job") {
      if (auto e = value(&v)) return *e;
      if (v.empty() || v[0] != '/') return UsageError{"--kd-batch-job is internal"};
      o.batch_job = v;
    } else if (arg == "--kd-cpu-rerun") {
      if (inline_value) return UsageError{"--kd-cpu-rerun is internal"};
      o.cpu_rerun = true;
    } else if (arg == "--kd-range-job") {
      if (auto e = value(&v)) return *e;
      double share = 0;
      if (!parse_seconds(v, &share) || !(share > 0 && share <= 1)) return UsageError{"--kd-range-job is internal"};
      o.range_job_share = share;
    } else if (arg == "--kd-shard-job") {
      if (auto e = value(&v)) return *e;
      if (v.empty() || v.size() > 512 || v.find_first_not_of("0123456789,") != std::string::npos)
        return UsageError{"--kd-shard-job is internal"};
      o.shard_job = v;
    } else if (arg == "--kd-full") {
      if (inline_value) return UsageError{"--kd-full is internal"};
      o.full = true;
    } else if (arg == "--kd-across-devices") {
      if (inline_value) return UsageError{"--kd-across-devices is internal"};
      o.across_devices = true;
    } else if (arg == "--kd-devices") {  // the GPUs of a --device-index list, for the split and the peer layer
      if (auto e = value(&v)) return *e;
      if (parse_device_list(v, &o.device_list) || o.device_list.size() < 2) return UsageError{"--kd-devices is internal"};
    } else if (arg == "--kd-nvml-facts") {
      if (inline_value) return UsageError{"--kd-nvml-facts is internal"};
      o.nvml_facts = true;
    } else if (arg == "--kd-run-id") {
      if (auto e = value(&v)) return *e;
      if (v.empty() || v.size() > 64 || v.find_first_not_of("0123456789abcdef") != std::string::npos)
        return UsageError{"--kd-run-id is internal"};
      o.run_id = v;
    } else if (arg == "--verbose" || arg == "-v" || arg == "--quiet" || arg == "-q" || arg == "--version") {
      if (inline_value) return UsageError{fmt::format("{} takes no value", arg)};
      (arg == "--version" ? o.version : arg == "--verbose" || arg == "-v" ? o.verbose : o.quiet) = true;
    } else if (arg == "--color") {
      if (auto e = value(&v)) return *e;
      if (v != "auto" && v != "always" && v != "never")
        return UsageError{fmt::format("--color must be 'auto', 'always' or 'never', not '{}'", v)};
      o.color = v;
    } else if (arg == "--host-check") {
      if (inline_value) return UsageError{"--host-check takes no value"};
      o.host_check = true;
    } else if (arg == "--python") {
      if (auto e = value(&v)) return *e;
      if (v.empty()) return UsageError{"--python needs an interpreter (a path, or a name on PATH)"};
      o.python = v;
    } else {
      return UsageError{fmt::format("unknown argument '{}'", args[i])};
    }
  }
  if (o.verbose && o.quiet) return UsageError{"--verbose and --quiet contradict each other: give one of them"};
  if (o.output && o.output == o.summary_md)
    return UsageError{"--output and --summary-md name the same file: give each its own new file"};
  if (layers_given && o.has_gtest_flag("filter"))
    return UsageError{"--layers and --gtest_filter both choose tests: give one of them"};
  if (full && (layers_given || o.has_gtest_flag("filter")))
    return UsageError{"--full runs every layer: give it without --layers or --gtest_filter"};
  if (o.memory_fraction && o.cpu_mode())
    return UsageError{"--memory-fraction caps the GPU's caching allocator: it has no meaning with --device cpu"};
  if (full) o.layers = known_layers;
  o.full = o.full || full;
  if (auto e = check_collective(o)) return *e;
  if (o.cpu_mode() && o.device_index != 0)  // never dropped silently: the CPU has no index
    return UsageError{fmt::format("--device-index {} has no meaning with --device cpu: give one of them", o.device_index)};
  if (o.all_devices && o.cpu_mode())
    return UsageError{"--device-index all checks every visible GPU: it cannot go with --device cpu"};
  if (o.all_devices && o.in_process)
    return UsageError{"--device-index all runs one worker per GPU: it cannot go with --in-process"};
  if (o.all_devices && !o.gtest_args.empty())  // each GPU's worker would write the same gtest output, filter apart
    return UsageError{"--device-index all chooses the tests for each GPU itself: use --layers, not --gtest_* flags"};
  // The sweep must end before the run's timeout does, or the run would say TIMEOUT instead of the range.
  if (std::find(o.layers.begin(), o.layers.end(), "L5") != o.layers.end() &&
      o.range_budget_s + kRangeTimeoutRoom > o.timeout_s)
    return UsageError{fmt::format("--range-budget {} s does not fit in --timeout {} s: L5 needs the budget plus {} s; "
                                  "lower --range-budget or raise --timeout",
                                  o.range_budget_s, o.timeout_s, kRangeTimeoutRoom)};
  // A test-only fault that cannot act in this run would end in a pass with a warning: refuse it instead.
  const bool l5 = std::find(o.layers.begin(), o.layers.end(), "L5") != o.layers.end() || o.has_gtest_flag("filter");
  if ((o.fault == "leak" || o.fault == "range-leak") && !l5)
    return UsageError{fmt::format("--inject-fault {} acts in layer L5: add --layers L5 (or --full)", o.fault)};
  if ((o.fault == "leak" || o.fault == "range-leak") && o.cpu_mode())
    return UsageError{fmt::format("--inject-fault {} is seen by the CUDA caching allocator's counters: it has no "
                                  "meaning with --device cpu", o.fault)};
  const bool l4 = std::find(o.layers.begin(), o.layers.end(), "L4") != o.layers.end() || o.model || !o.extensions.empty();
  if ((o.fault == "cpu-shards" || o.fault == "cpu-shard-oom") && (!o.cpu_mode() || !l4))
    return UsageError{fmt::format("--inject-fault {} splits L4 over CPU processes: it needs --device cpu and L4 "
                                  "(--layers app)", o.fault)};
  if (o.fault == "shard-oom" && (!o.all_devices || !l4))
    return UsageError{"--inject-fault shard-oom acts in L4 across GPUs: it needs --device-index all and L4 (--layers app)"};
  if (o.model.has_value() != o.input.has_value())
    return UsageError{"--model and --input go together: the model, and the spec of its input and output contract"};
  if ((o.model || !o.extensions.empty()) && !o.has_gtest_flag("filter")) {
    if (o.layers.empty()) o.layers = expand_app({"app"}, known_layers);
    if (std::find(o.layers.begin(), o.layers.end(), "L4") == o.layers.end())
      return UsageError{fmt::format("{} is checked by layer L4: add L4 to --layers (or use --layers app)",
                                    o.model ? "--model" : "--extension")};
  }
  return o;
}

std::vector<std::string> range_arguments(const Options& o) {
  std::vector<std::string> a;
  if (o.range_axis != "batch") a.insert(a.end(), {"--range-axis", o.range_axis});
  if (o.range_budget_s != kDefaultRangeBudget) a.insert(a.end(), {"--range-budget", plain_decimal(o.range_budget_s)});
  if (o.range_memory_fraction != kDefaultRangeMemoryFraction)
    a.insert(a.end(), {"--range-memory-fraction", plain_decimal(o.range_memory_fraction)});
  return a;
}

std::vector<std::string> collective_arguments(const Options& o) {
  std::vector<std::string> a;
  if (o.rendezvous)
    a.insert(a.end(), {"--rendezvous=" + *o.rendezvous, "--world-size", std::to_string(*o.world_size), "--rank",
                       std::to_string(*o.rank)});
  if (o.min_bus_bandwidth > 0) a.insert(a.end(), {"--min-bus-bandwidth", plain_decimal(o.min_bus_bandwidth)});
  return a;
}

std::vector<std::string> worker_arguments(const Options& o, int event_fd) {
  std::vector<std::string> a = {"--kd-worker-fd", std::to_string(event_fd), "--device", o.device};
  if (o.device_index_given) a.insert(a.end(), {"--device-index", std::to_string(o.device_index)});
  if (!o.run_id.empty()) a.insert(a.end(), {"--kd-run-id", o.run_id});
  if (!o.layers.empty()) a.insert(a.end(), {"--layers", fmt::format("{}", fmt::join(o.layers, ","))});
  if (o.full) a.push_back("--kd-full");  // the worker's L8 then runs only as a rank of a multi-rank job
  if (!o.fault.empty()) a.insert(a.end(), {"--inject-fault", o.fault});
  if (o.across_devices) a.push_back("--kd-across-devices");
  if (!o.all_devices && !o.device_list.empty()) a.insert(a.end(), {"--kd-devices", fmt::format("{}", fmt::join(o.device_list, ","))});
  if (o.verbose) a.push_back("--verbose");  // the worker keeps GoogleTest's own printer
  if (o.min_bandwidth_fraction != kDefaultMinBandwidthFraction)
    a.insert(a.end(), {"--min-bandwidth-fraction", plain_decimal(o.min_bandwidth_fraction)});
  if (o.min_matmul_fraction != kDefaultMinMatmulFraction)
    a.insert(a.end(), {"--min-matmul-fraction", plain_decimal(o.min_matmul_fraction)});
  if (o.memory_fraction) a.insert(a.end(), {"--memory-fraction", plain_decimal(*o.memory_fraction)});
  // The worker's L5 fits its range sweep into what is left of the run (and checks the budget against it).
  if (o.timeout_s != 30) a.insert(a.end(), {"--timeout", plain_decimal(o.timeout_s)});
  const std::vector<std::string> range = range_arguments(o);
  a.insert(a.end(), range.begin(), range.end());
  const std::vector<std::string> collective = collective_arguments(o);
  a.insert(a.end(), collective.begin(), collective.end());
  // The user's own strings go as --opt=VALUE: a value that itself starts with "--" reads back as given.
  if (o.python) a.push_back("--python=" + *o.python);
  if (o.model) a.insert(a.end(), {"--model=" + *o.model, "--input=" + *o.input});
  for (const auto& e : o.extensions) a.push_back("--extension=" + e);
  a.insert(a.end(), o.gtest_args.begin(), o.gtest_args.end());
  return a;
}

std::string usage_text() {
  return R"(Usage: kernodeck-diagnostic [OPTIONS] [--gtest_* flags]
       kernodeck-diagnostic aggregate REPORT|FOLDER... (many machines' reports; see aggregate --help)

Checks, layer by layer, that this machine can run LibTorch work on its GPU, and
names the first layer that fails. A plain run checks GPU 0 (layers L1-L3).

Options:
  --device cuda|cpu     device to check (default cuda; cpu only when asked)
  --device-index N      GPU index among the visible devices (default 0); "all":
                        every visible GPU, one verdict each, then the peer layer
                        (with L4: its workload also split over all the GPUs);
                        a list (0,2,3): those GPUs only, the same way
  --timeout S           whole-run limit in seconds, 5 to 120 (default 30)
  --output FILE         also write the JSON report to FILE, a new file
                        (an existing path is never overwritten: exit 12);
                        "-": the report on stdout, the text on stderr
  --summary-md FILE     also write a Markdown summary to FILE, a new file (same
                        rules as --output), e.g. for $GITHUB_STEP_SUMMARY
  --layers L1,L3        run only these layers (or choose tests with --gtest_filter);
                        "app" means L1-L4: the fixed check, then the application layer
  --full                run every layer (L4 to L7 included; L8 when this process
                        is one rank of a multi-rank job)
  --model FILE          L4: also check your model, TorchScript or an AOTInductor
                        package (.pt2) (implies --layers app)
  --input SPEC.json     L4: its inputs (names, shapes, dtypes, ranges) and output contract
  --extension FILE      L4: load this custom-operator library (what the application loads
                        with torch.ops.load_library) before the model; repeatable
                        (implies --layers app)
  --min-bandwidth-fraction F
                        L6: fail (16) when the copy bandwidth is below F of the
                        device's reference figure, 0 to 1 (default 0.6)
  --min-matmul-fraction F
                        L6: the same for the matrix products (default 0.5)
  --memory-fraction F   L5: let the caching allocator hold at most F of the GPU's
                        memory (0 < F <= 1) while L5's workload runs: as on a smaller card
  --range-axis batch|length|concurrency|processes
                        L5: the axis the operating range grows (default batch):
                        the batch, the sequence length, executions at once in one
                        process, or worker processes at once on the device
  --range-budget S      L5: the range sweep's time, 1 to 110 s (default 20); a run
                        with L5 needs --timeout of at least S + 10
  --range-memory-fraction F
                        L5: the share of the GPU's memory the sweep may use (the
                        allocator is capped to it), or on the CPU of the host's
                        available memory, above 0 and at most 1 (default 0.9)
  --rendezvous HOST:PORT, --world-size N, --rank R
                        L8: where this rank of a job meets the others (rank 0's
                        address); without them L8 reads torchrun's, Slurm's or a
                        Kubernetes Indexed Job's environment (docs/fleet.md)
  --min-bus-bandwidth G L8: fail (16) when the all-reduce's bus bandwidth at its
                        largest size is below G GB/s (default 0: no floor)
  --bundle DIR          also write the result bundle into DIR, a new folder (exit 12 if it exists)
  --host-check          also report what nvidia-smi and NVML see: driver, memory, and
                        each GPU's health facts (ECC, PCIe, clocks; at most 3 s)
  --python PATH         also check that this interpreter imports torch (layer L1)
  --in-process          debug: run the tests in this process (no timeout guard)
  --inject-fault KIND   TEST ONLY: wrong-product, hang, abort, oom, runtime-error,
                        leak (L5's workload keeps every loss tensor), range-leak (L5, GPU),
                        device-assert (L4: --model's run reads as a GPU's device-side
                        assert, so that its CPU re-run is exercised without a GPU),
                        slow-save (a 3 s pause between the bundle and the report),
                        cpu-shards / cpu-shard-oom (L4 across devices split over three
                        CPU processes; the second runs out of memory), shard-oom (the
                        second GPU's shard runs out of memory), collective-wrong (L8:
                        the last rank adds 1 to one element), collective-rank-exit
                        (L8: the last rank is killed right after joining);
                        recorded in the report, never a diagnosis
  -v, --verbose         also show GoogleTest's own output (by default: one line per layer)
  -q, --quiet           show the verdict line only (the exit code is the same)
  --color WHEN          auto (a terminal, unless NO_COLOR is set), always or never
  --version             what this build is: the suite, the LibTorch it was built against
  -h, --help            this text

Examples:
  kernodeck-diagnostic                          the fast verdict on GPU 0 (L1-L3)
  kernodeck-diagnostic --layers L3              one layer (and what it needs)
  kernodeck-diagnostic --full --output r.json   every layer, the report kept in r.json
  kernodeck-diagnostic -q --output - | jq .code in CI: the report on stdout
  ctest --test-dir build -L conformance         layer by layer, as CTest tests

Documentation: README.md and docs/ (docs/command-line.md has every option).

Exit codes: 0 passed, 2 usage error, 3 LibTorch missing, 4 LibTorch fails to load,
5 no GPU backend in the build, 6 GPU unavailable, 7 device index invalid,
8 wrong result, 9 out of memory / runtime error, 10 timeout, 11 worker failed,
12 report not written, 13 model not loaded, 14 application contract broken,
15 memory check failed (L5), 16 performance below the floor (L6, L8),
17 a rank unreachable (L8), 18 GPU unhealthy (L2: NVML reports uncorrected ECC errors or a failed/pending remap).
)";
}

}  // namespace kd
