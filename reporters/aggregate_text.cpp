#include "aggregate_text.h"

#include <fmt/format.h>

#include "markdown_summary.h"
#include "printable.h"

namespace kd {
namespace {

using nlohmann::json;

std::string plural(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : "—"; }

// "1 of 4 machines failed, 1 report not counted", or "all 4 machines passed".
std::string headline(const json& a) {
  const json& c = a["counts"];
  const int counted = c["counted"], failed = c["failed"], not_counted = c["not_counted"];
  std::string line = failed ? fmt::format("{} of {} failed", failed, plural(counted, "machine", "machines"))
                     : counted ? fmt::format("all {} passed", plural(counted, "machine", "machines"))
                               : "no machine counted";
  if (not_counted) line += fmt::format(", {} not counted", plural(not_counted, "report", "reports"));
  return line;
}

// "2.11.0 (3), not loaded (1)": each value with how many machines; null reads as `none`.
std::string seen_line(const json& list, const char* none, bool markdown = false) {
  std::string out;
  for (const auto& e : list) {
    const std::string v = e["value"].is_string() ? e["value"].get<std::string>() : none;
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", markdown ? markdown_text(v) : v, e["count"].get<int>());
  }
  return out.empty() ? "—" : out;
}

struct VersionRow {
  const char* key;
  const char* label;
  const char* none;  // what null means for this key
};
const VersionRow kVersionRows[] = {{"libtorch", "LibTorch", "not loaded"},
                                   {"cuda", "CUDA", "none"},
                                   {"hip", "HIP", "none"},
                                   {"driver", "driver", "not reported (no --host-check)"},
                                   {"device", "device", "none (CPU run or no GPU)"},
                                   {"suite", "suite", "not reported"}};

std::string where(const json& m) {
  std::string s = m["layer"].is_string() ? "layer " + m["layer"].get<std::string>() : "no layer";
  if (m["stage"].is_string()) s += ", stage " + m["stage"].get<std::string>();
  return s + ", " + m["target"].get<std::string>();
}

// A string field as literal Markdown ("—" for null).
std::string md(const json& v) { return markdown_text(value_text(v)); }

// L8's job: its verdict, then one row per rank.
std::string job_lines(const json& job) {
  std::string out = fmt::format("\nJob (L8 collective): {} of {} reported", plural(job["reported"], "rank", "ranks"),
                                job["world_size"].get<int>());
  if (!job["unreported_ranks"].empty())
    out += fmt::format("; no report from rank {}", fmt::join(job["unreported_ranks"].get<std::vector<int>>(), ", "));
  const json& f = job["first_failing"];
  out += job["status"] == "passed" ? "; passed\n"
         : f.is_object()          ? fmt::format("; failed: rank {} {}\n", f["rank"].get<int>(), f["code"].get<std::string>())
                                  : "; failed\n";
  for (const auto& r : job["ranks"])
    out += fmt::format("  rank {:<5} {:<7} {:<26} {}\n", r["rank"].get<int>(), r["status"].get<std::string>(),
                       r["code"].get<std::string>(), r["report"].get<std::string>());
  return out;
}

}  // namespace

std::string render_aggregate_terminal(const json& raw) {
  const json a = printable_strings(raw);  // other machines' text never acts on this terminal
  const json& c = a["counts"];
  std::string out = fmt::format("kernodeck aggregate: {}: {} passed, {} failed, {} not counted\n",
                                plural(c["reports"], "report", "reports"), c["passed"].get<int>(),
                                c["failed"].get<int>(), c["not_counted"].get<int>());
  if (!a["codes"].empty()) {
    out += "\nCodes\n";
    for (const auto& e : a["codes"])
      out += fmt::format("  {:<26} exit {:<3} {}\n", e["code"].get<std::string>(), e["exit_code"].get<int>(),
                         plural(e["count"], "machine", "machines"));
  }
  if (!a["failing"].empty()) {
    out += "\nFailing machines\n";
    for (const auto& m : a["failing"]) {
      out += fmt::format("  {}  {} (exit {}), {}\n", m["report"].get<std::string>(), m["code"].get<std::string>(),
                         m["exit_code"].get<int>(), where(m));
      if (m["message"].is_string()) out += "      " + m["message"].get<std::string>() + "\n";
    }
  }
  if (!a["not_counted"].empty()) {
    out += "\nNot counted\n";
    for (const auto& p : a["not_counted"])
      out += fmt::format("  {}  {}: {}\n", p["report"].get<std::string>(), p["problem"].get<std::string>(),
                         p["message"].get<std::string>());
  }
  if (!a["injected"].empty()) {
    out += "\nTest-only fault injections (not machines' results, not counted)\n";
    for (const auto& p : a["injected"])
      out += fmt::format("  {}  --inject-fault {}: {}\n", p["report"].get<std::string>(), p["fault"].get<std::string>(),
                         p["code"].get<std::string>());
  }
  if (a["job"].is_object()) out += job_lines(a["job"]);
  if (c["counted"] > 0) {
    out += "\nVersions seen (machines)\n";
    for (const auto& row : kVersionRows)
      out += fmt::format("  {:<9} {}\n", row.label, seen_line(a["versions"][row.key], row.none));
  }
  out += fmt::format("\nAggregate: {} (exit {}): {}\n", a["status"] == "passed" ? "PASSED" : "FAILED",
                     a["exit_code"].get<int>(), headline(a));
  return out;
}

std::string render_aggregate_markdown(const json& raw) {
  const json a = printable_strings(raw);  // other machines' text never acts on this terminal
  const json& c = a["counts"];
  std::string out = fmt::format("### kernodeck aggregate: {} {}\n\n", a["status"] == "passed" ? "✅" : "❌",
                                markdown_text(headline(a)));
  out += "| Reports | Counted | Passed | Failed | Not counted | Exit |\n|---|---|---|---|---|---|\n";
  out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", c["reports"].get<int>(), c["counted"].get<int>(),
                     c["passed"].get<int>(), c["failed"].get<int>(), c["not_counted"].get<int>(), a["exit_code"].get<int>());
  if (!a["codes"].empty()) {
    out += "\n| Code | Exit | Machines |\n|---|---|---|\n";
    for (const auto& e : a["codes"])
      out += fmt::format("| `{}` | {} | {} |\n", e["code"].get<std::string>(), e["exit_code"].get<int>(), e["count"].get<int>());
  }
  if (!a["failing"].empty()) {
    out += "\n#### Failing machines\n\n| Report | Code | Layer | Stage | Target | Message |\n|---|---|---|---|---|---|\n";
    for (const auto& m : a["failing"])
      out += fmt::format("| {} | `{}` (exit {}) | {} | {} | {} | {} |\n", md(m["report"]), m["code"].get<std::string>(),
                         m["exit_code"].get<int>(), md(m["layer"]), md(m["stage"]),
                         md(m["target"]), m["message"].is_string() ? md(m["message"]) : "");
  }
  if (!a["not_counted"].empty()) {
    out += "\n#### Not counted\n\n| Report | Problem | Why |\n|---|---|---|\n";
    for (const auto& p : a["not_counted"])
      out += fmt::format("| {} | {} | {} |\n", md(p["report"]), p["problem"].get<std::string>(), md(p["message"]));
  }
  if (!a["injected"].empty()) {
    out += "\n#### Test-only fault injections (not counted)\n\n| Report | Fault | Code |\n|---|---|---|\n";
    for (const auto& p : a["injected"])
      out += fmt::format("| {} | {} | `{}` |\n", md(p["report"]), md(p["fault"]), md(p["code"]));
  }
  if (c["counted"] > 0) {
    out += "\n#### Versions seen\n\n| | Machines |\n|---|---|\n";
    for (const auto& row : kVersionRows)
      out += fmt::format("| {} | {} |\n", row.label, seen_line(a["versions"][row.key], row.none, true));
  }
  return out;
}

}  // namespace kd
