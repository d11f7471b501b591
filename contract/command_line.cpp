// Parses the command line through the option table (contract/option_table.h), then applies the rules
// between options. Pure: never touches the machine.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "option_table.h"
#include "verdict/codes.h"

namespace kd {
namespace {

// "--gtest_filter=X" -> "--gtest_filter"; "--device=cpu" -> "--device".
std::string option_name(const std::string& arg) { return arg.substr(0, arg.find('=')); }

bool takes_value(const std::string& arg, Command command) {
  const OptionRow* r = find_option(arg, command);
  return r && !r->metavar.empty();
}

// "--help" anywhere, or "-h" where it is not the value of an option ("--output -h" names a file).
bool help_requested(const std::vector<std::string>& args, Command command) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--help" || (args[i] == "-h" && (i == 0 || !takes_value(args[i - 1], command)))) return true;
  return false;
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

// One argument (and its value, if it takes one) into o; i moves past a value given as the next argument.
std::optional<UsageError> read_argument(const std::vector<std::string>& args, size_t* i, Options* o,
                                        Command command = Command::Diagnostic) {
  std::string arg = args[*i];
  if (command == Command::Diagnostic && arg.rfind("--gtest_", 0) == 0) {
    if (auto e = find_option("--gtest_*")->read(arg, *o)) return UsageError{*e};
    return std::nullopt;
  }
  std::optional<std::string> inline_value;
  if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
    inline_value = arg.substr(eq + 1);
    arg = arg.substr(0, eq);
  }
  const OptionRow* row = find_option(arg, command);
  if (!row || !row->read) return UsageError{fmt::format("unknown argument '{}'", args[*i])};
  std::string value;
  if (row->metavar.empty()) {
    if (inline_value) return UsageError{fmt::format("{} takes no value", arg)};
  } else if (inline_value) {
    value = *inline_value;
  } else if (*i + 1 < args.size() && args[*i + 1].rfind("--", 0) != 0) {  // "--output --in-process" is a mistake
    value = args[++*i];
  } else {
    return UsageError{fmt::format("{} needs a value", arg)};
  }
  if (auto e = row->read(value, *o)) return UsageError{*e};
  return std::nullopt;
}

// The options of the command's rows, for its --help.
std::string options_text(Command command) {
  std::string options;
  for (const OptionRow& r : option_table()) {
    if (r.command != command || r.audience == Audience::Internal || r.help.empty()) continue;
    const std::string label = !r.help_label.empty() ? r.help_label
                              : r.metavar.empty()    ? r.flag
                              : r.flag.empty()       ? r.metavar
                                                     : r.flag + " " + r.metavar;
    std::string help = r.help;
    for (size_t nl = help.find('\n'); nl != std::string::npos; nl = help.find('\n', nl + 1)) help.insert(nl + 1, 24, ' ');
    options += label.size() < 22 ? fmt::format("  {:<22}{}\n", label, help) : fmt::format("  {}\n{:24}{}\n", label, "", help);
  }
  return options;
}

}  // namespace

std::optional<std::string> Options::gtest_output_file() const {
  const std::string v = gtest_value("output");
  if (v.empty()) return std::nullopt;
  return v.substr(v.find(':') + 1);
}

bool Options::runs_layer(const std::string& id) const {
  return std::find(layers.begin(), layers.end(), id) != layers.end() || has_gtest_flag("filter");
}

double Options::run_limit_s() const { return timeout_s + (sustained_s && runs_layer("L6") ? *sustained_s : 0); }

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

ParseResult parse_aggregate_command_line(const std::vector<std::string>& args) {
  if (help_requested(args, Command::Aggregate)) return HelpRequested{};
  auto error = [](const std::string& why) { return UsageError{"aggregate: " + why}; };
  Options o;
  std::set<std::string> seen;
  bool operands_only = false;  // after "--": every argument is a report, even one that starts with "-"
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (operands_only || arg == "-" || arg.rfind("-", 0) != 0) {
      operand_row(Command::Aggregate)->read(arg, o);
      continue;
    }
    if (arg == "--") {
      operands_only = true;
      continue;
    }
    if (!seen.insert(option_name(arg)).second)
      return error(fmt::format("{} is given more than once: give it once", option_name(arg)));
    if (auto e = read_argument(args, &i, &o, Command::Aggregate))
      return error(e->message.rfind("unknown argument", 0) == 0 ? e->message + " (see aggregate --help)" : e->message);
  }
  if (o.reports.empty()) return UsageError{"aggregate needs at least one report: a file or a folder of them"};
  if (o.output && o.output == o.summary_md)
    return error("--output and --summary-md name the same file: give each its own new file");
  return o;
}

std::string aggregate_usage_text() {
  return "Usage: kernodeck-diagnostic aggregate REPORT|FOLDER... [--output FILE] [--summary-md FILE]\n\n"
         "Reads many machines' JSON reports (kernodeck-diagnostic --output) and prints one answer:\n"
         "machines per code, the failing machines with layer and stage, the versions seen, and every\n"
         "report that could not be counted (missing, unreadable, invalid, a duplicate), each named.\n"
         "Never loads LibTorch.\n\n"
         "Options:\n" +
         options_text(Command::Aggregate) +
         "\nExit codes: 0 every machine passed and every report was counted, 20 a machine failed,\n"
         "21 a report was missing, unreadable, invalid or a duplicate, 22 both, 2 usage error,\n"
         "12 an output file could not be written, 19 this build has no kernodeck-diagnostic-full.\n";
}

// L6 under load: its long checks only with L6, and their test-only faults only with the check they act in.
std::optional<UsageError> check_load(const Options& o) {
  const bool l6 = o.runs_layer("L6");
  if (o.sustained_s && !l6) return UsageError{"--sustained runs in layer L6: add --layers L6 (or --full)"};
  if (o.memory_integrity && !l6) return UsageError{"--memory-integrity runs in layer L6: add --layers L6 (or --full)"};
  if ((o.fault == "silent-corruption" || o.fault == "throttle") && !(o.sustained_s && l6))
    return UsageError{fmt::format("--inject-fault {} acts in L6's sustained load: add --layers L6 --sustained S", o.fault)};
  if (o.fault == "memory-corrupt" && !(o.memory_integrity && l6))
    return UsageError{"--inject-fault memory-corrupt acts in L6's memory integrity pass: add --layers L6 --memory-integrity"};
  return std::nullopt;
}

ParseResult parse_command_line(const std::vector<std::string>& args, const std::vector<std::string>& known_layers) {
  Options o;
  if (help_requested(args, Command::Diagnostic)) return HelpRequested{};
  // An option given twice is a mistake to point out, not a guess at which one was meant (--extension repeats).
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string name = option_name(args[i]);
    const OptionRow* row = find_option(name);
    if (name.rfind("--", 0) == 0 && name.size() > 2 && !(row && row->repeatable) && !seen.insert(name).second)
      return UsageError{fmt::format("{} is given more than once: give it once", name)};
    if (auto e = read_argument(args, &i, &o)) return *e;
  }
  if (o.plan && seen.size() != 1) return UsageError{"--kd-plan is internal: it comes alone"};
  const bool layers_given = seen.count("--layers") > 0, full = seen.count("--full") > 0;
  if (layers_given) {
    std::vector<std::string> chosen;
    for (const auto& l : expand_app(o.layers, known_layers)) {
      if (std::find(known_layers.begin(), known_layers.end(), l) == known_layers.end())
        return UsageError{fmt::format("--layers: unknown layer '{}' (this build has: {})", l, fmt::join(known_layers, ", "))};
      if (std::find(chosen.begin(), chosen.end(), l) == chosen.end()) chosen.push_back(l);
    }
    o.layers = chosen;
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
  const bool watched = o.has_gtest_flag("filter") || std::any_of(o.layers.begin(), o.layers.end(), [](const std::string& l) {
                         return l == "L5" || l == "L6" || l == "L8";
                       });
  if (o.fault == "stand-in-gpu" && (!o.cpu_mode() || !watched))
    return UsageError{"--inject-fault stand-in-gpu makes a CPU run watch the stand-in NVML's GPU 0: it needs --device cpu "
                      "and L5, L6 or L8 (--layers L5)"};
  if (auto e = check_load(o)) return *e;
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

std::string usage_text() {
  const std::string options = options_text(Command::Diagnostic);
  // The exit codes, from verdict/codes: "0 passed, 2 usage error, ..., 9 out of memory / runtime error, ...".
  std::string codes, line;
  for (int exit = 0; exit < 256; ++exit) {
    std::vector<std::string> phrases;
    for (int c = 0; c <= static_cast<int>(kLastCode); ++c) {
      const CodeInfo& ci = info(static_cast<Code>(c));
      if (ci.exit_code == exit && std::find(phrases.begin(), phrases.end(), ci.exit_phrase) == phrases.end())
        phrases.emplace_back(ci.exit_phrase);
    }
    if (phrases.empty()) continue;
    const std::string item = fmt::format("{} {}", exit, fmt::join(phrases, " / "));
    if (!line.empty() && line.size() + item.size() > 90) {
      codes += line + ",\n";
      line.clear();
    }
    line += (line.empty() ? "" : ", ") + item;
  }
  codes += line + ".\n";
  return "Usage: kernodeck-diagnostic [OPTIONS] [--gtest_* flags]\n"
         "       kernodeck-diagnostic aggregate REPORT|FOLDER... (many machines' reports; see aggregate --help)\n\n"
         "Checks, layer by layer, that this machine can run LibTorch work on its GPU, and\n"
         "names the first layer that fails. A plain run checks GPU 0 (layers L1-L3).\n\n"
         "Options:\n" +
         options +
         "\nExamples:\n"
         "  kernodeck-diagnostic                          the fast verdict on GPU 0 (L1-L3)\n"
         "  kernodeck-diagnostic --layers L3              one layer (and what it needs)\n"
         "  kernodeck-diagnostic --full --output r.json   every layer, the report kept in r.json\n"
         "  kernodeck-diagnostic -q --output - | jq .code in CI: the report on stdout\n"
         "  ctest --test-dir build -L conformance         layer by layer, as CTest tests\n\n"
         "Documentation: README.md and docs/ (docs/command-line.md has every option).\n\n"
         "Exit codes: " + codes;
}

}  // namespace kd
