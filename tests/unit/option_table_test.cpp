// The option table is the one place an option is written: every option given reaches the report's
// "requested" and the bundle's command.json (paths as placeholders), travels to the worker in the run
// plan when the worker needs it, and is listed in --help.
#include "contract/option_table.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "contract/run_plan.h"

namespace kd {
namespace {

using nlohmann::json;

const std::vector<std::string> kLayers = {"L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8"};

// What an option needs beside it to be a run that can be done (the rules between options).
const std::map<std::string, std::vector<std::string>> kCompanions = {
    {"--model", {"--input", "spec.json"}},
    {"--input", {"--model", "m.pt"}},
    {"--rendezvous", {"--world-size", "4", "--rank", "1", "--layers", "L8"}},
    {"--world-size", {"--rendezvous", "h:1", "--rank", "1", "--layers", "L8"}},
    {"--rank", {"--rendezvous", "h:1", "--world-size", "4", "--layers", "L8"}},
    {"--min-bus-bandwidth", {"--layers", "L8"}},
    {"--sustained", {"--layers", "L6"}},
    {"--memory-integrity", {"--layers", "L6"}},
};

// The rows a user can type (--help and --version make no report).
std::vector<const OptionRow*> typed_rows() {
  std::vector<const OptionRow*> rows;
  for (const OptionRow& r : option_table())
    if (r.command == Command::Diagnostic && r.audience != Audience::Internal && r.flag != "--help" && r.flag != "--version")
      rows.push_back(&r);
  return rows;
}

std::vector<std::string> given(const OptionRow& r) {
  std::vector<std::string> args;
  if (r.flag == "--gtest_*") args = {r.example};
  else if (r.metavar.empty()) args = {r.flag};
  else args = {r.flag, r.example};
  if (auto c = kCompanions.find(r.flag); c != kCompanions.end()) args.insert(args.end(), c->second.begin(), c->second.end());
  return args;
}

Options parsed(const std::vector<std::string>& args) {
  const ParseResult p = parse_command_line(args, kLayers);
  if (const auto* e = std::get_if<UsageError>(&p)) ADD_FAILURE() << fmt::format("{}: {}", fmt::join(args, " "), e->message);
  const auto* o = std::get_if<Options>(&p);
  return o ? *o : Options{};
}

TEST(OptionTable, EveryOptionGivenIsInRequestedAndInTheCommand) {
  const json defaults = requested_options(Options{});
  for (const OptionRow* r : typed_rows()) {
    SCOPED_TRACE(r->flag);
    ASSERT_FALSE(r->report_key.empty());
    const Options o = parsed(given(*r));
    const json requested = requested_options(o);
    EXPECT_NE(requested[r->report_key], defaults[r->report_key]) << "requested." << r->report_key << " does not show it";
    const std::vector<std::string> command = command_arguments(o);
    const std::string shown = fmt::format("{}", fmt::join(command, " "));
    const std::string flag = r->flag == "--gtest_*" ? r->example : r->flag;
    EXPECT_NE(std::find(command.begin(), command.end(), flag), command.end()) << shown;
    if (!r->placeholder.empty()) {  // a path or an address: only that it was given
      EXPECT_NE(std::find(command.begin(), command.end(), r->placeholder), command.end()) << shown;
      EXPECT_EQ(shown.find(r->example), std::string::npos) << shown;
      EXPECT_EQ(requested.dump().find(r->example), std::string::npos) << requested.dump();
    } else if (!r->metavar.empty() && r->flag != "--device-index") {
      EXPECT_NE(shown.find(r->flag + " " + r->example), std::string::npos) << shown;  // as given
    }
  }
}

TEST(OptionTable, TheCommandReproducesTheRun) {
  // command.json's arguments, with the placeholders filled in again, parse back to the same run.
  const Options o = parsed({"--device-index", "0,2", "--timeout", "119.999999999", "--range-memory-fraction", "0.000001",
                            "--layers", "L4,L5", "--range-budget", "3", "--extension", "x.so", "--python", "py"});
  std::vector<std::string> again = command_arguments(o);
  again.erase(again.begin());  // the program's name
  EXPECT_EQ(requested_options(parsed(again)), requested_options(o));
}

TEST(OptionTable, TheRunPlanCarriesWhatTheWorkerNeedsAndNothingElse) {
  Options o = parsed({"--device", "cpu", "--timeout", "60", "--layers", "L1,L3", "--python=--odd", "--output", "r.json",
                      "--bundle", "b", "--summary-md", "s.md", "--color", "never", "--inject-fault", "hang", "-v"});
  Role role;
  role.event_fd = 7;
  role.run_id = "0123456789abcdef";
  const json plan = plan_document({role, o});
  for (const char* supervisor_only : {"output", "summary_md", "bundle", "color", "quiet", "host_check", "wait_for_gpu_release", "in_process"})
    EXPECT_FALSE(plan["options"].contains(supervisor_only)) << supervisor_only;
  const auto back = plan_from_document(plan);
  ASSERT_TRUE(std::holds_alternative<Plan>(back)) << std::get<std::string>(back);
  const Options& w = std::get<Plan>(back).options;
  for (const OptionRow& r : option_table()) {
    if (r.to_worker && !r.key.empty()) EXPECT_EQ(r.get(w), r.get(o)) << r.key;
  }
  EXPECT_EQ(std::get<Plan>(back).role.event_fd, 7);
  EXPECT_EQ(std::get<Plan>(back).role.run_id, "0123456789abcdef");
  EXPECT_FALSE(w.output.has_value());
}

// Every role and what it carries reads back as it was written; an unknown role is no plan.
TEST(OptionTable, APlanNamesItsRole) {
  Plan shard;
  shard.role.kind = ProcessRole::ShardJob;
  shard.role.shard_ids = {3, 5, 8};
  shard.options.device_index = 2;
  const Plan back = std::get<Plan>(plan_from_document(plan_document(shard)));
  EXPECT_EQ(back.role.kind, ProcessRole::ShardJob);
  EXPECT_EQ(back.role.shard_ids, (std::vector<int64_t>{3, 5, 8}));
  EXPECT_EQ(back.options.device_index, 2);
  for (ProcessRole kind : {ProcessRole::Worker, ProcessRole::BatchJob, ProcessRole::RangeJob, ProcessRole::ModelRerun}) {
    Plan p;
    p.role.kind = kind;
    EXPECT_EQ(std::get<Plan>(plan_from_document(plan_document(p))).role.kind, kind);
  }
  json doc = plan_document(shard);
  doc["role"]["kind"] = "something_else";
  EXPECT_EQ(std::get<std::string>(plan_from_document(doc)), "the plan's role is missing or malformed");
}

TEST(OptionTable, APlanOfTheWrongShapeNamesTheField) {
  json plan = plan_document(Plan{});
  plan["options"]["timeout_s"] = "thirty";
  EXPECT_EQ(std::get<std::string>(plan_from_document(plan)), "the plan's field 'timeout_s' has the wrong type");
  plan["options"].erase("timeout_s");  // a field left out keeps its default
  EXPECT_EQ(std::get<Plan>(plan_from_document(plan)).options.timeout_s, kDefaultTimeout);
  EXPECT_EQ(std::get<std::string>(plan_from_document(json::array())), "not a run plan of version 2");
}

TEST(OptionTable, HelpListsEveryOptionAndEveryExitCode) {
  const std::string text = usage_text();
  for (const OptionRow* r : typed_rows()) {
    if (r->flag != "--gtest_*") EXPECT_NE(text.find(r->flag), std::string::npos) << r->flag;
  }
  // The exit codes, each the number that starts one item of the list ("..., 8 wrong result, ..."): matched whole,
  // so that "8 " is not found inside "18 ".
  const std::string codes = text.substr(text.find("Exit codes: ") + 12);
  std::set<int> listed;
  const std::regex item(R"((?:^|, |,\n)(\d+) )");
  for (auto m = std::sregex_iterator(codes.begin(), codes.end(), item); m != std::sregex_iterator(); ++m)
    EXPECT_TRUE(listed.insert(std::stoi((*m)[1])).second) << "listed twice: " << (*m)[1];
  EXPECT_EQ(listed, (std::set<int>{0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})) << codes;
  EXPECT_NE(codes.find("19 suite incomplete"), std::string::npos) << codes;  // the last code, listed too
  EXPECT_NE(text.find("9 out of memory / runtime error"), std::string::npos);
  EXPECT_EQ(text.find("--kd-"), std::string::npos);  // internal options are never shown
}

TEST(OptionTable, EachOptionIsOneRow) {
  std::vector<std::string> flags, keys;
  for (const OptionRow& r : option_table()) {
    if (!r.flag.empty()) flags.push_back(fmt::format("{} {}", static_cast<int>(r.command), r.flag));
    if (!r.key.empty()) keys.push_back(r.key);
  }
  for (auto* list : {&flags, &keys}) {
    std::sort(list->begin(), list->end());
    EXPECT_EQ(std::adjacent_find(list->begin(), list->end()), list->end());
  }
}

// aggregate's options are rows of the same table: its --help lists them, and they parse like the diagnostic's.
TEST(OptionTable, AggregatesOptionsAreRowsToo) {
  const std::string text = aggregate_usage_text();
  int rows = 0;
  for (const OptionRow& r : option_table()) {
    if (r.command != Command::Aggregate) continue;
    ++rows;
    EXPECT_NE(text.find(r.help_label.empty() ? (r.flag.empty() ? r.metavar : r.flag) : r.help_label), std::string::npos)
        << r.flag << r.metavar;
    EXPECT_FALSE(r.to_worker);
    EXPECT_TRUE(r.report_key.empty());
  }
  EXPECT_EQ(rows, 4);  // REPORT|FOLDER..., --output, --summary-md, --help
  EXPECT_EQ(find_option("--device", Command::Aggregate), nullptr);
  const auto parsed = parse_aggregate_command_line({"--summary-md", "s.md", "r.json"});
  EXPECT_EQ(std::get<Options>(parsed).reports, std::vector<std::string>{"r.json"});
  EXPECT_EQ(std::get<Options>(parsed).summary_md, "s.md");
}

}  // namespace
}  // namespace kd
