#include "aggregate_command.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "contract/options.h"
#include "reporters/aggregate.h"
#include "reporters/aggregate_document.h"
#include "reporters/aggregate_text.h"
#include "reporters/report_file.h"
#include "verdict/codes.h"

namespace kd {
namespace {

constexpr long kMaxReportBytes = 16L << 20;  // a report is a few KiB; anything this big is not one

using Problem = ReportSource::Problem;

ReportSource read_report(const std::string& name) {
  ReportSource s{name, Problem::None, "", {}};
  auto fail = [&](Problem p, std::string why) {
    s.problem = p;
    s.message = std::move(why);
    return s;
  };
  struct stat st {};
  if (::stat(name.c_str(), &st) != 0)
    return fail(errno == ENOENT ? Problem::Missing : Problem::Unreadable, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(Problem::Unreadable, "not a regular file");
  if (st.st_size > kMaxReportBytes) return fail(Problem::Unreadable, fmt::format("{} bytes: too large for a report", st.st_size));
  std::ifstream in(name, std::ios::binary);
  std::ostringstream text;
  if (!(in && text << in.rdbuf()) && st.st_size > 0) return fail(Problem::Unreadable, std::strerror(errno));
  if (text.str().empty()) return fail(Problem::Invalid, "an empty file");
  try {
    s.report = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    return fail(Problem::Invalid, fmt::format("not JSON (parse error at byte {})", e.byte));
  }
  return s;
}

// The *.json files directly in a folder, sorted; hidden ones (a writer's temporary file) are not reports.
std::optional<std::vector<std::string>> folder_reports(const std::string& folder, std::string* why) {
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) {
    *why = std::strerror(errno);
    return std::nullopt;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir)) {
    const std::string n = e->d_name;
    if (n[0] != '.' && n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) names.push_back(n);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  const std::string prefix = folder.back() == '/' ? folder : folder + "/";
  for (auto& n : names) n = prefix + n;
  return names;
}

}  // namespace

std::vector<ReportSource> load_report_sources(const std::vector<std::string>& inputs) {
  std::vector<ReportSource> sources;
  std::set<std::string> read;  // a file named twice (a folder and a glob) is read once
  for (const auto& input : inputs) {
    struct stat st {};
    std::vector<std::string> files = {input};
    if (::stat(input.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      std::string why;
      const auto found = folder_reports(input, &why);
      if (!found || found->empty()) {
        sources.push_back({input, found ? Problem::Missing : Problem::Unreadable,
                           found ? "a folder without any .json report" : "a folder that cannot be read: " + why, {}});
        continue;
      }
      files = *found;
    }
    for (const auto& f : files)
      if (read.insert(f).second) sources.push_back(read_report(f));
  }
  return sources;
}

int run_aggregate_command(const std::vector<std::string>& args) {
  const ParseResult parsed = parse_aggregate_command_line(args);
  if (std::holds_alternative<HelpRequested>(parsed)) {
    std::fputs(aggregate_usage_text().c_str(), stdout);
    return 0;
  }
  if (const auto* err = std::get_if<UsageError>(&parsed)) {
    std::fprintf(stderr, "kernodeck-diagnostic: usage error: %s\nRun 'kernodeck-diagnostic aggregate --help'.\n",
                 err->message.c_str());
    return exit_code(Code::UsageError);
  }
  const Options& o = std::get<Options>(parsed);
  const int write_failed = exit_code(Code::OutputWriteFailed);
  // Like the diagnostic: an output that cannot be created is refused before anything is read.
  for (const auto* path : {&o.output, &o.summary_md})
    if (*path)
      if (auto why = check_new_file(**path)) {
        std::fprintf(stderr, "kernodeck-diagnostic: OUTPUT_WRITE_FAILED: %s\n", why->c_str());
        return write_failed;
      }
  const nlohmann::json aggregate = aggregate_reports(load_report_sources(o.reports));
  std::string text = render_aggregate_terminal(aggregate);
  auto fail = [&](const std::string& why) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    std::fprintf(stderr, "kernodeck-diagnostic: OUTPUT_WRITE_FAILED: %s\n", why.c_str());
    return write_failed;
  };
  if (o.summary_md)
    if (auto why = write_new_file(*o.summary_md, render_aggregate_markdown(aggregate))) return fail(*why);
  if (o.output)
    if (auto why = write_new_file(*o.output, aggregate.dump(2) + "\n")) {
      if (o.summary_md) std::remove(o.summary_md->c_str());  // never a summary that contradicts the exit code
      return fail(*why);
    }
  // The files written go above the result line, which stays the last one.
  std::string written;
  if (o.summary_md) written += "Summary: " + *o.summary_md + "\n";
  if (o.output) written += "JSON: " + *o.output + "\n";
  text.insert(text.rfind("\nAggregate: ") + 1, written);
  std::fputs(text.c_str(), stdout);
  return fleet::from_json(aggregate).exit_code;
}

}  // namespace kd
