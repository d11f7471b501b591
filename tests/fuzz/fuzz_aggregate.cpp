// Fuzzes `aggregate` with reports it does not control: the input, cut at NUL bytes, is up to 8
// documents, each parsed as JSON (or, when it is not JSON, an invalid report) and aggregated,
// then rendered for the terminal and as Markdown and dumped as JSON.
// Beyond "no crash, no exception, no sanitizer report": every report is either counted or named
// as not counted, the counts add up, the exit code is one of the documented ones and agrees with
// the counts, and the terminal output ends with the result line.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "reporters/aggregate.h"
#include "reporters/aggregate_text.h"

namespace {

#define check(ok) ((ok) ? (void)0 : (std::fprintf(stderr, "property failed: %s (line %d)\n", #ok, __LINE__), std::abort()))

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<kd::ReportSource> sources;
  for (size_t start = 0; start <= input.size() && sources.size() < 8;) {
    const size_t end = std::min(input.find('\0', start), input.size());
    kd::ReportSource s{"r" + std::to_string(sources.size()) + ".json", kd::ReportSource::Problem::None, "", {}};
    s.report = nlohmann::json::parse(input.substr(start, end - start), nullptr, false);
    if (s.report.is_discarded()) {
      s.problem = kd::ReportSource::Problem::Invalid;
      s.message = "not JSON";
    }
    sources.push_back(std::move(s));
    start = end + 1;
  }
  const nlohmann::json a = kd::aggregate_reports(sources);
  const auto& c = a["counts"];
  check(c["reports"] == sources.size());
  check(c["counted"].get<size_t>() + c["not_counted"].get<size_t>() == sources.size());
  check(c["passed"].get<size_t>() + c["failed"].get<size_t>() == c["counted"].get<size_t>());
  check(a["machines"].size() == c["counted"] && a["not_counted"].size() == c["not_counted"]);
  const int exit = a["exit_code"];
  check(exit == (c["failed"] > 0 ? (c["not_counted"] > 0 ? kd::kFleetBoth : kd::kFleetMachineFailed)
                                  : (c["not_counted"] > 0 ? kd::kFleetReportNotCounted : 0)));
  const std::string terminal = kd::render_aggregate_terminal(a);
  check(terminal.rfind("\nAggregate: ") != std::string::npos && terminal.back() == '\n');
  check(!kd::render_aggregate_markdown(a).empty());
  check(nlohmann::json::parse(a.dump()) == a);  // everything in it is valid UTF-8 and reads back
  return 0;
}
