// The option table is the one place an option is written: every option given reaches the report's
// "requested" and the bundle's command.json (paths as placeholders), travels to the worker in the run
// plan when the worker needs it, and is listed in --help.
#include "contract/option_table.h"

#include <algorithm>
#include <map>

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
};

// The rows a user can type (--help and --version make no report).
std::vector<const OptionRow*> typed_rows() {
  std::vector<const OptionRow*> rows;
  for (const OptionRow& r : option_table())
    if (r.audience != Audience::Internal && r.flag != "--help" && r.flag != "--version") rows.push_back(&r);
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
  o.worker_fd = 7;
  o.run_id = "0123456789abcdef";
  const json plan = plan_document(o);
  for (const char* supervisor_only : {"output", "summary_md", "bundle", "color", "quiet", "host_check", "in_process"})
    EXPECT_FALSE(plan["options"].contains(supervisor_only)) << supervisor_only;
  const auto back = options_from_plan(plan);
  ASSERT_TRUE(std::holds_alternative<Options>(back)) << std::get<std::string>(back);
  const Options& w = std::get<Options>(back);
  for (const OptionRow& r : option_table()) {
    if (r.to_worker && !r.key.empty()) EXPECT_EQ(r.get(w), r.get(o)) << r.key;
  }
  EXPECT_EQ(w.worker_fd, 7);
  EXPECT_FALSE(w.output.has_value());
}

TEST(OptionTable, APlanOfTheWrongShapeNamesTheField) {
  json plan = plan_document(Options{});
  plan["options"]["timeout_s"] = "thirty";
  EXPECT_EQ(std::get<std::string>(options_from_plan(plan)), "the plan's field 'timeout_s' has the wrong type");
  plan["options"].erase("timeout_s");  // a field left out keeps its default
  EXPECT_EQ(std::get<Options>(options_from_plan(plan)).timeout_s, kDefaultTimeout);
  EXPECT_EQ(std::get<std::string>(options_from_plan(json::array())), "not a run plan of version 1");
}

TEST(OptionTable, HelpListsEveryOptionAndEveryExitCode) {
  const std::string text = usage_text();
  for (const OptionRow* r : typed_rows()) {
    if (r->flag != "--gtest_*") EXPECT_NE(text.find(r->flag), std::string::npos) << r->flag;
  }
  for (const int code : {0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
    EXPECT_NE(text.find(fmt::format("{} ", code)), std::string::npos) << code;
  EXPECT_NE(text.find("19 suite incomplete"), std::string::npos);
  EXPECT_NE(text.find("9 out of memory / runtime error"), std::string::npos);
  EXPECT_EQ(text.find("--kd-"), std::string::npos);  // internal options are never shown
}

TEST(OptionTable, EachOptionIsOneRow) {
  std::vector<std::string> flags, keys;
  for (const OptionRow& r : option_table()) {
    if (!r.flag.empty()) flags.push_back(r.flag);
    if (!r.key.empty()) keys.push_back(r.key);
  }
  for (auto* list : {&flags, &keys}) {
    std::sort(list->begin(), list->end());
    EXPECT_EQ(std::adjacent_find(list->begin(), list->end()), list->end());
  }
}

}  // namespace
}  // namespace kd
