#include "cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

namespace kd {

const std::vector<std::string> kFaults = {"wrong-product", "hang", "abort", "oom", "runtime-error"};

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

}  // namespace

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
  bool layers_given = false;
  for (const auto& a : args)
    if (a == "-h" || a == "--help") return HelpRequested{};
  // An option given twice is a mistake to point out, not a guess at which one was meant.
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.rfind("--", 0) == 0 && arg.size() > 2 && !seen.insert(option_name(arg)).second)
      return UsageError{fmt::format("{} is given more than once: give it once", option_name(arg))};
    if (arg.rfind("--gtest_", 0) == 0) {
      if (arg.back() == '=') return UsageError{fmt::format("{} needs a value after '='", option_name(arg))};
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
      if (v != "cuda" && v != "cpu") return UsageError{fmt::format("--device must be 'cuda' or 'cpu', not '{}'", v)};
      o.device = v;
    } else if (arg == "--device-index") {
      if (auto e = value(&v)) return *e;
      long n = 0;
      if (!parse_int(v, 1023, &n))
        return UsageError{fmt::format("--device-index must be a whole number from 0 to 1023, not '{}'", v)};
      o.device_index = static_cast<int>(n);
    } else if (arg == "--timeout") {
      if (auto e = value(&v)) return *e;
      double t = 0;
      if (!parse_seconds(v, &t) || t < kMinTimeout || t > kMaxTimeout)
        return UsageError{fmt::format("--timeout must be a number of seconds from {} to {}, not '{}'", kMinTimeout,
                                      kMaxTimeout, v)};
      o.timeout_s = t;
    } else if (arg == "--output") {
      if (auto e = value(&v)) return *e;
      if (v.empty()) return UsageError{"--output needs a file name"};
      o.output = v;
    } else if (arg == "--layers") {
      if (auto e = value(&v)) return *e;
      o.layers.clear();
      for (const auto& l : split_commas(v)) {
        if (std::find(known_layers.begin(), known_layers.end(), l) == known_layers.end())
          return UsageError{fmt::format("--layers: unknown layer '{}' (this build has: {})", l,
                                        fmt::join(known_layers, ", "))};
        if (std::find(o.layers.begin(), o.layers.end(), l) == o.layers.end()) o.layers.push_back(l);
      }
      layers_given = true;
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
    } else if (arg == "--host-check" || arg == "--python") {
      return UsageError{fmt::format("{} is not available in this version yet", arg)};
    } else {
      return UsageError{fmt::format("unknown argument '{}' (see --help)", args[i])};
    }
  }
  if (layers_given && o.has_gtest_flag("filter"))
    return UsageError{"--layers and --gtest_filter both choose tests: give one of them"};
  return o;
}

std::vector<std::string> worker_arguments(const Options& o, int event_fd) {
  std::vector<std::string> a = {"--kd-worker-fd", std::to_string(event_fd), "--device", o.device,
                                "--device-index", std::to_string(o.device_index)};
  if (!o.layers.empty()) a.insert(a.end(), {"--layers", fmt::format("{}", fmt::join(o.layers, ","))});
  if (!o.fault.empty()) a.insert(a.end(), {"--inject-fault", o.fault});
  a.insert(a.end(), o.gtest_args.begin(), o.gtest_args.end());
  return a;
}

std::string usage_text() {
  return R"(Usage: kernodeck-diagnostic [OPTIONS] [--gtest_* flags]

Checks, layer by layer, that this machine can run LibTorch work on its GPU, and
names the first layer that fails. A plain run checks GPU 0 (layers L1-L3).

Options:
  --device cuda|cpu     device to check (default cuda; cpu only when asked)
  --device-index N      GPU index among the visible devices (default 0)
  --timeout S           whole-run limit in seconds, 5 to 120 (default 30)
  --output FILE         also write the JSON report to FILE, a new file
                        (an existing path is never overwritten: exit 12)
  --layers L1,L3        run only these layers (or choose tests with --gtest_filter)
  --in-process          debug: run the tests in this process (no timeout guard)
  --inject-fault KIND   TEST ONLY: wrong-product, hang, abort, oom, runtime-error;
                        recorded in the report, never a diagnosis
  -h, --help            this text

Exit codes: 0 passed, 2 usage error, 3 LibTorch missing, 4 LibTorch fails to load,
5 no GPU backend in the build, 6 GPU unavailable, 7 device index invalid,
8 wrong result, 9 out of memory / runtime error, 10 timeout, 11 worker failed,
12 report not written.
)";
}

}  // namespace kd
