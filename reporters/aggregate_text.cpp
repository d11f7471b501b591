#include "aggregate_text.h"

#include <fmt/format.h>

#include "aggregate_document.h"
#include "markdown_summary.h"
#include "printable.h"

namespace kd {
namespace {

using nlohmann::json;

std::string plural(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// "1 of 4 machines failed, 1 report not counted", or "all 4 machines passed".
std::string headline(const fleet::Counts& c) {
  std::string line = c.failed    ? fmt::format("{} of {} failed", c.failed, plural(c.counted, "machine", "machines"))
                     : c.counted ? fmt::format("all {} passed", plural(c.counted, "machine", "machines"))
                                 : "no machine counted";
  if (c.not_counted) line += fmt::format(", {} not counted", plural(c.not_counted, "report", "reports"));
  return line;
}

// "2.11.0 (3), not loaded (1)": each value with how many machines; null reads as `none`.
std::string seen_line(const std::vector<fleet::Seen>& list, const char* none, bool markdown = false) {
  std::string out;
  for (const auto& e : list) {
    const std::string v = e.value.value_or(none);
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", markdown ? markdown_text(v) : v, e.count);
  }
  return out.empty() ? "—" : out;
}

const std::vector<fleet::Seen>& seen_of(const fleet::Aggregate& a, const char* key) {
  static const std::vector<fleet::Seen> kNone;
  const auto it = a.versions.find(key);
  return it == a.versions.end() ? kNone : it->second;
}

std::string where(const fleet::Machine& m) {
  std::string s = m.layer ? "layer " + *m.layer : "no layer";
  if (m.stage) s += ", stage " + *m.stage;
  return s + ", " + m.target;
}

// A text as literal Markdown ("—" for null).
std::string md(const fleet::Text& v) { return markdown_text(v.value_or("—")); }

// L8's job: its verdict, then one row per rank.
std::string job_lines(const fleet::Job& job) {
  std::string out = fmt::format("\nJob (L8 collective): {} of {} reported", plural(job.reported, "rank", "ranks"), job.world_size);
  if (!job.unreported_ranks.empty()) out += fmt::format("; no report from rank {}", fmt::join(job.unreported_ranks, ", "));
  out += job.status == "passed" ? "; passed\n"
         : job.first_failing    ? fmt::format("; failed: rank {} {}\n", job.first_failing->rank, job.first_failing->code)
                                : "; failed\n";
  for (const auto& r : job.ranks) out += fmt::format("  rank {:<5} {:<7} {:<26} {}\n", r.rank, r.status, r.code, r.report);
  return out;
}

}  // namespace

std::string render_aggregate_terminal(const json& raw) {
  const fleet::Aggregate a = fleet::from_json(printable_strings(raw));  // other machines' text never acts on this terminal
  const fleet::Counts& c = a.counts;
  std::string out = fmt::format("kernodeck aggregate: {}: {} passed, {} failed, {} not counted\n",
                                plural(c.reports, "report", "reports"), c.passed, c.failed, c.not_counted);
  if (!a.codes.empty()) {
    out += "\nCodes\n";
    for (const auto& e : a.codes)
      out += fmt::format("  {:<26} exit {:<3} {}\n", e.code, e.exit_code, plural(e.count, "machine", "machines"));
  }
  if (!a.actions.empty()) {
    out += "\nActions (failing machines)\n";
    for (const auto& e : a.actions)
      out += fmt::format("  {:<16} {}{}\n", e.action, plural(e.count, "machine", "machines"),
                         e.node_at_fault ? " (the node is at fault)" : "");
  }
  if (!a.failing.empty()) {
    out += "\nFailing machines\n";
    for (const auto& m : a.failing) {
      out += fmt::format("  {}  {} (exit {}), {}{}\n", m.report, m.code, m.exit_code, where(m),
                         m.action ? ", action " + *m.action : "");
      if (m.message) out += "      " + *m.message + "\n";
    }
  }
  if (!a.not_counted.empty()) {
    out += "\nNot counted\n";
    for (const auto& p : a.not_counted) out += fmt::format("  {}  {}: {}\n", p.report, p.problem, p.message);
  }
  if (!a.injected.empty()) {
    out += "\nTest-only fault injections (not machines' results, not counted)\n";
    for (const auto& p : a.injected) out += fmt::format("  {}  --inject-fault {}: {}\n", p.report, p.fault, p.code);
  }
  if (a.job) out += job_lines(*a.job);
  if (c.counted > 0) {
    out += "\nVersions seen (machines)\n";
    for (const auto& row : fleet::kVersionRows) out += fmt::format("  {:<9} {}\n", row.label, seen_line(seen_of(a, row.key), row.none));
  }
  out += fmt::format("\nAggregate: {} (exit {}): {}\n", a.status == "passed" ? "PASSED" : "FAILED", a.exit_code, headline(c));
  return out;
}

std::string render_aggregate_markdown(const json& raw) {
  const fleet::Aggregate a = fleet::from_json(printable_strings(raw));  // other machines' text never acts on this terminal
  const fleet::Counts& c = a.counts;
  std::string out = fmt::format("### kernodeck aggregate: {} {}\n\n", a.status == "passed" ? "✅" : "❌", markdown_text(headline(c)));
  out += "| Reports | Counted | Passed | Failed | Not counted | Exit |\n|---|---|---|---|---|---|\n";
  out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", c.reports, c.counted, c.passed, c.failed, c.not_counted, a.exit_code);
  if (!a.codes.empty()) {
    out += "\n| Code | Exit | Machines |\n|---|---|---|\n";
    for (const auto& e : a.codes) out += fmt::format("| `{}` | {} | {} |\n", e.code, e.exit_code, e.count);
  }
  if (!a.actions.empty()) {
    out += "\n| Action | Failing machines | Node at fault |\n|---|---|---|\n";
    for (const auto& e : a.actions)
      out += fmt::format("| `{}` | {} | {} |\n", e.action, e.count, e.node_at_fault ? "yes" : "no");  // a word of ours
  }
  if (!a.failing.empty()) {
    out += "\n#### Failing machines\n\n| Report | Code | Action | Layer | Stage | Target | Message |\n"
           "|---|---|---|---|---|---|---|\n";
    for (const auto& m : a.failing)
      out += fmt::format("| {} | `{}` (exit {}) | {} | {} | {} | {} | {} |\n", md(m.report), m.code, m.exit_code,
                         md(m.action), md(m.layer), md(m.stage), md(m.target), m.message ? md(m.message) : "");
  }
  if (!a.not_counted.empty()) {
    out += "\n#### Not counted\n\n| Report | Problem | Why |\n|---|---|---|\n";
    for (const auto& p : a.not_counted) out += fmt::format("| {} | {} | {} |\n", md(p.report), p.problem, md(p.message));
  }
  if (!a.injected.empty()) {
    out += "\n#### Test-only fault injections (not counted)\n\n| Report | Fault | Code |\n|---|---|---|\n";
    for (const auto& p : a.injected) out += fmt::format("| {} | {} | `{}` |\n", md(p.report), md(p.fault), md(p.code));
  }
  if (c.counted > 0) {
    out += "\n#### Versions seen\n\n| | Machines |\n|---|---|\n";
    for (const auto& row : fleet::kVersionRows)
      out += fmt::format("| {} | {} |\n", row.label, seen_line(seen_of(a, row.key), row.none, true));
  }
  return out;
}

}  // namespace kd
