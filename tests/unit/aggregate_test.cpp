// `aggregate`: what counts as a report, the counts, the failing machines with layer and stage,
// the versions seen, every report not counted named with why, and the exit code scripts read.
#include "reporters/aggregate.h"

#include <gtest/gtest.h>

#include "reporters/aggregate_text.h"
#include "reporters/printable.h"
#include "reporters/report_check.h"
#include "contract/options.h"
#include "runner/aggregate_command.h"
#include "sample_reports.h"
#include "temp_dir.h"

#include <fstream>

namespace kd {
namespace {

using nlohmann::json;
using Problem = ReportSource::Problem;

json failing(const std::string& run_id) {
  json r = failed_report();
  r["run_id"] = run_id;
  r["host"] = nullptr;
  return r;
}

json passing(const std::string& run_id) {
  json r = passed_cpu_report();
  r["run_id"] = run_id;
  r["pytorch"]["cuda_compiled"] = r["pytorch"]["hip_compiled"] = nullptr;  // as in a real report: CPU-only build
  r["host"] = {{"tool", "nvidia-smi"}, {"status", "ok"}, {"gpus", {{{"driver_version", "580.95.05"}, {"memory_total_mib", 143771}}}}};
  return r;
}

ReportSource source(const std::string& name, const json& r) { return {name, Problem::None, "", r}; }

TEST(ReportCheck, AcceptsWhatTheDiagnosticWrites) {
  EXPECT_EQ(report_problem(failing("00000000000000a1")), std::nullopt);
  EXPECT_EQ(report_problem(passing("00000000000000a2")), std::nullopt);
}

TEST(ReportCheck, AcceptsANewerMinorVersionWithFieldsItDoesNotKnow) {
  json r = passing("00000000000000a3");
  r["schema_version"] = "1.9";
  r["devices"] = json::array({{{"index", 0}}, {{"index", 1}}});  // e.g. one verdict per GPU
  r["code"] = "SOME_NEWER_CODE";
  r["status"] = "failed";
  r["exit_code"] = 17;
  EXPECT_EQ(report_problem(r), std::nullopt);
}

TEST(ReportCheck, NamesTheFirstProblem) {
  auto problem = [](auto change) {
    json r = failing("00000000000000b1");
    change(r);
    return report_problem(r).value_or("(valid)");
  };
  EXPECT_EQ(report_problem(json::array()), "a report is a JSON object, not an array");
  EXPECT_EQ(report_problem(json::parse(R"({"testsuites": []})")), "not a kernodeck report: 'schema_version' is missing");
  EXPECT_EQ(report_problem(aggregate_reports({})), "an aggregate, not a report (keep aggregates outside the reports' folder)");
  EXPECT_EQ(problem([](json& r) { r["schema_version"] = "2.0"; }),
            "schema_version '2.0' is not 1.x, the major version this build reads");
  EXPECT_EQ(problem([](json& r) { r.erase("code"); }), "'code' is missing");
  EXPECT_EQ(problem([](json& r) { r["exit_code"] = "8"; }), "'exit_code' must be integer, not a string");
  EXPECT_EQ(problem([](json& r) { r["exit_code"] = 6; }), "'exit_code' is 6 but 'CHECK_FAILED' means 8");
  EXPECT_EQ(problem([](json& r) { r["status"] = "passed"; }), "'status' is 'passed' but 'exit_code' is 8");
  EXPECT_EQ(problem([](json& r) { r["status"] = "ok"; }), "'status' must be 'passed' or 'failed', not 'ok'");
  EXPECT_EQ(problem([](json& r) { r["run_id"] = "r-42"; }), "'run_id' is not 16 hexadecimal digits");
  EXPECT_EQ(problem([](json& r) { r["pytorch"]["version"] = 2.11; }),
            "'pytorch.version' must be string or null, not a number");
  EXPECT_EQ(problem([](json& r) { r["layers"][1].erase("status"); }), "'layers[1].status' is missing");
  EXPECT_EQ(problem([](json& r) { r["host"] = {{"gpus", {{{"memory_total_mib", 1}}}}}; }),
            "'host.gpus[0].driver_version' is missing");
  EXPECT_EQ(problem([](json& r) { r["error"] = "boom"; }), "'error' must be object or null, not a string");
}

// A test-only fault injection is no machine's result: listed apart, never in the counts, codes or exit.
TEST(Aggregate, InjectedRunsAreListedApartAndNeverCounted) {
  json injected = failing("00000000000000e2");
  injected["requested"]["fault_injection"] = "wrong-product";
  const json a = aggregate_reports({source("real.json", passing("00000000000000e1")), source("injected.json", injected)});
  EXPECT_EQ(a["exit_code"], 0);
  EXPECT_EQ(a["counts"]["counted"], 1);
  EXPECT_EQ(a["counts"]["failed"], 0);
  EXPECT_EQ(a["counts"]["injected"], 1);
  EXPECT_TRUE(a["failing"].empty());
  EXPECT_EQ(a["injected"], json::parse(R"([{"report": "injected.json", "run_id": "00000000000000e2",
                                             "fault": "wrong-product", "code": "CHECK_FAILED"}])"));
  EXPECT_NE(render_aggregate_terminal(a).find("injected.json  --inject-fault wrong-product: CHECK_FAILED"), std::string::npos);
  EXPECT_NE(render_aggregate_markdown(a).find("Test-only fault injections"), std::string::npos);
}

TEST(Aggregate, CountsCodesFailingMachinesAndVersions) {
  const json a = aggregate_reports({source("n1.json", passing("00000000000000c1")),
                                    source("n2.json", failing("00000000000000c2")),
                                    source("n3.json", passing("00000000000000c3"))});
  EXPECT_EQ(a["exit_code"], kFleetMachineFailed);
  EXPECT_EQ(a["status"], "failed");
  EXPECT_EQ(a["counts"], json::parse(R"({"reports": 3, "counted": 3, "passed": 2, "failed": 1, "not_counted": 0, "injected": 0})"));
  EXPECT_EQ(a["codes"], json::parse(R"([{"code": "CPU_CHECK_PASSED", "exit_code": 0, "count": 2},
                                        {"code": "CHECK_FAILED", "exit_code": 8, "count": 1}])"));
  ASSERT_EQ(a["failing"].size(), 1u);
  const json& f = a["failing"][0];
  EXPECT_EQ(f["report"], "n2.json");
  EXPECT_EQ(f["run_id"], "00000000000000c2");
  EXPECT_EQ(f["layer"], "L3");
  EXPECT_EQ(f["stage"], "L3.product");
  EXPECT_EQ(f["target"], "cuda:0");
  EXPECT_EQ(f["message"], "p = [[3,1],[7,2]], expected [[3,1],[7,3]]");
  EXPECT_EQ(a["versions"]["libtorch"], json::parse(R"([{"value": "1.13.0", "count": 2}, {"value": "2.11.0", "count": 1}])"));
  EXPECT_EQ(a["versions"]["driver"], json::parse(R"([{"value": "580.95.05", "count": 2}, {"value": null, "count": 1}])"));
  EXPECT_EQ(a["versions"]["device"], json::parse(R"([{"value": null, "count": 2}, {"value": "NVIDIA H200", "count": 1}])"));
  EXPECT_EQ(a["machines"].size(), 3u);
}

TEST(Aggregate, TheDocumentReadsBackAsTheSameType) {  // what the renderers read is what was written
  json rank1 = failing("00000000000000d2");
  rank1["collective"] = {{"rank", 1}, {"world_size", 3}};
  json rank0 = passing("00000000000000d1");
  rank0["collective"] = {{"rank", 0}, {"world_size", 3}};
  json injected = passing("00000000000000d3");
  injected["requested"]["fault_injection"] = "wrong-product";
  const json a = aggregate_reports({source("r0.json", rank0), source("r1.json", rank1), source("i.json", injected),
                                    {"gone.json", Problem::Missing, "no such file", json()}});
  ASSERT_TRUE(a["job"].is_object());
  EXPECT_EQ(a["job"]["unreported_ranks"], json({2}));
  EXPECT_EQ(fleet::to_json(fleet::from_json(a)), a);
  EXPECT_EQ(fleet::to_json(fleet::from_json(aggregate_reports({}))), aggregate_reports({}));
}

TEST(Aggregate, LayerComesFromTheStageThenFromTheLayerMarkedFailed) {
  json r = failing("00000000000000c4");
  r["code"] = "GPU_UNAVAILABLE";
  r["exit_code"] = 6;
  r["stage"] = "L2.gpu_available";
  r["layers"] = json::array();
  EXPECT_EQ(aggregate_reports({source("n.json", r)})["failing"][0]["layer"], "L2");
  // L3 run alone: its test failed on L2's prerequisite; the stage names the layer that failed.
  r["layers"] = json::array({{{"id", "L2"}, {"status", "not_run"}}, {{"id", "L3"}, {"status", "failed"}}});
  EXPECT_EQ(aggregate_reports({source("n.json", r)})["failing"][0]["layer"], "L2");
  r["stage"] = "report";  // no step: the layer marked failed
  EXPECT_EQ(aggregate_reports({source("n.json", r)})["failing"][0]["layer"], "L3");
  r["stage"] = nullptr;
  r["layers"] = json::array();
  EXPECT_EQ(aggregate_reports({source("n.json", r)})["failing"][0]["layer"], nullptr);
}

TEST(Aggregate, EveryReportNotCountedIsNamedAndDecidesTheExitCode) {
  json bad = passing("00000000000000d3");
  bad["exit_code"] = 3;
  const json a = aggregate_reports({source("ok.json", passing("00000000000000d1")),
                                    {"gone.json", Problem::Missing, "No such file or directory", {}},
                                    {"locked.json", Problem::Unreadable, "Permission denied", {}},
                                    {"junk.json", Problem::Invalid, "not JSON (parse error at byte 1)", {}},
                                    source("bad.json", bad),
                                    source("copy.json", passing("00000000000000d1"))});
  EXPECT_EQ(a["exit_code"], kFleetReportNotCounted);
  EXPECT_EQ(a["counts"]["reports"], 6);
  EXPECT_EQ(a["counts"]["counted"], 1);
  EXPECT_EQ(a["counts"]["not_counted"], 5);
  EXPECT_EQ(a["not_counted"], json::parse(R"J([
    {"report": "gone.json", "problem": "missing", "message": "No such file or directory"},
    {"report": "locked.json", "problem": "unreadable", "message": "Permission denied"},
    {"report": "junk.json", "problem": "invalid", "message": "not JSON (parse error at byte 1)"},
    {"report": "bad.json", "problem": "invalid", "message": "'status' is 'passed' but 'exit_code' is 3"},
    {"report": "copy.json", "problem": "duplicate", "message": "the same run (run_id 00000000000000d1) as ok.json"}])J"));
}

TEST(Aggregate, ExitCodes) {
  const ReportSource ok = source("a.json", passing("00000000000000e1")), bad = source("b.json", failing("00000000000000e2"));
  const ReportSource gone{"c.json", Problem::Missing, "No such file or directory", {}};
  EXPECT_EQ(aggregate_reports({ok})["exit_code"], 0);
  EXPECT_EQ(aggregate_reports({ok})["status"], "passed");
  EXPECT_EQ(aggregate_reports({ok, bad})["exit_code"], kFleetMachineFailed);
  EXPECT_EQ(aggregate_reports({ok, gone})["exit_code"], kFleetReportNotCounted);
  EXPECT_EQ(aggregate_reports({bad, gone})["exit_code"], kFleetBoth);
}

TEST(AggregateText, TerminalNamesTheFailingMachineAndEndsWithTheResult) {
  const json a = aggregate_reports({source("n1.json", passing("00000000000000f1")),
                                    source("n2.json", failing("00000000000000f2")),
                                    {"n3.json", Problem::Missing, "No such file or directory", {}}});
  const std::string t = render_aggregate_terminal(a);
  EXPECT_EQ(line_starting(t, "kernodeck aggregate:"), "kernodeck aggregate: 3 reports: 1 passed, 1 failed, 1 not counted") << t;
  EXPECT_EQ(line_starting(t, "  n2.json"), "  n2.json  CHECK_FAILED (exit 8), layer L3, stage L3.product, cuda:0") << t;
  EXPECT_EQ(line_starting(t, "  n3.json"), "  n3.json  missing: No such file or directory") << t;
  EXPECT_EQ(line_starting(t, "  LibTorch"), "  LibTorch  1.13.0 (1), 2.11.0 (1)") << t;
  EXPECT_EQ(line_starting(t, "Aggregate:"), "Aggregate: FAILED (exit 22): 1 of 2 machines failed, 1 report not counted") << t;
  EXPECT_EQ(line_starting(render_aggregate_terminal(aggregate_reports({source("n1.json", passing("00000000000000f1"))})),
                          "Aggregate:"),
            "Aggregate: PASSED (exit 0): all 1 machine passed");
}

TEST(AggregateText, MarkdownTablesKeepMachineTextLiteral) {
  json r = failing("00000000000000f3");
  r["error"]["message"] = "a | b <script>";
  const std::string md = render_aggregate_markdown(aggregate_reports({source("node_1|x.json", r)}));
  EXPECT_EQ(line_starting(md, "### "), "### kernodeck aggregate: ❌ 1 of 1 machine failed") << md;
  EXPECT_EQ(line_starting(md, "| 1 |"), "| 1 | 1 | 0 | 1 | 0 | 20 |") << md;
  EXPECT_EQ(line_starting(md, "| `CHECK_FAILED`"), "| `CHECK_FAILED` | 8 | 1 |") << md;
  EXPECT_EQ(line_starting(md, "| node"),
            R"(| node\_1\|x.json | `CHECK_FAILED` (exit 8) | — | L3 | L3.product | cuda:0 | a \| b \<script\> |)") << md;
  // A report older than 1.10 has no action: counted as unknown, never guessed.
  EXPECT_EQ(line_starting(md, "| `unknown`"), "| `unknown` | 1 | no |") << md;
  EXPECT_EQ(line_starting(md, "| LibTorch |"), "| LibTorch | 2.11.0 (1) |") << md;
}

// Issue 17: a report's message reached the terminal raw: escape sequences, OSC, BEL and a forged result line.
TEST(AggregateText, ControlCharactersFromAReportNeverAct) {
  json r = failing("00000000000000f4");
  r["error"]["message"] = "x\x1b[2J\x1b]0;title\x07\nAggregate: PASSED (exit 0): all 9 machines passed\r\xc2\x9b" "1m \xe2\x80\xae" "z";
  for (const std::string& t : {render_aggregate_terminal(aggregate_reports({source("n\x1b[1m.json", r)})),
                               render_aggregate_markdown(aggregate_reports({source("n\x1b[1m.json", r)}))}) {
    for (const char c : t) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);
    EXPECT_EQ(t.find("\xc2\x9b"), std::string::npos);
    EXPECT_EQ(t.find("\xe2\x80\xae"), std::string::npos);
    EXPECT_EQ(line_starting(t, "Aggregate: PASSED"), "") << t;  // no forged line of its own
  }
  const std::string t = render_aggregate_terminal(aggregate_reports({source("n.json", r)}));
  EXPECT_NE(t.find(R"(x\x1b[2J\x1b]0;title\x07\x0aAggregate: PASSED)"), std::string::npos) << t;  // shown, not acted
  EXPECT_EQ(printable("a\tb \xe2\x80\x8f ok é"), "a\\x09b \xe2\x80\x8f ok é");  // other Unicode is kept
}

TEST(AggregateCommandLine, InputsAndOptions) {
  auto parsed = parse_aggregate_command_line({"a.json", "--output", "agg.json", "dir/", "--summary-md=s.md", "--", "--odd.json"});
  ASSERT_TRUE(std::holds_alternative<Options>(parsed));
  const auto& o = std::get<Options>(parsed);
  EXPECT_EQ(o.reports, (std::vector<std::string>{"a.json", "dir/", "--odd.json"}));
  EXPECT_EQ(o.output, "agg.json");
  EXPECT_EQ(o.summary_md, "s.md");
  EXPECT_TRUE(std::holds_alternative<HelpRequested>(parse_aggregate_command_line({"--help"})));
}

TEST(AggregateCommandLine, UsageErrors) {
  auto error = [](std::vector<std::string> args) {
    const auto parsed = parse_aggregate_command_line(args);
    return std::holds_alternative<UsageError>(parsed) ? std::get<UsageError>(parsed).message : "(accepted)";
  };
  EXPECT_EQ(error({}), "aggregate needs at least one report: a file or a folder of them");
  EXPECT_EQ(error({"--output", "x.json"}), "aggregate needs at least one report: a file or a folder of them");
  EXPECT_EQ(error({"a.json", "--output"}), "aggregate: --output needs a value");
  EXPECT_EQ(error({"a.json", "--output="}), "aggregate: --output needs a file name");
  EXPECT_EQ(error({"a.json", "--output", "x", "--output", "y"}), "aggregate: --output is given more than once: give it once");
  EXPECT_EQ(error({"a.json", "--device", "cpu"}), "aggregate: unknown argument '--device' (see aggregate --help)");
  EXPECT_EQ(error({"a.json", "--output", "x", "--summary-md", "x"}),
            "aggregate: --output and --summary-md name the same file: give each its own new file");
}

TEST(AggregateSources, AFolderIsItsJsonFilesSortedAndAFileNamedTwiceIsReadOnce) {
  test::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir.file(name)) << text; };
  write("b.json", passing("0000000000000011").dump());
  write("a.json", "{not json");
  write(".b.json.kd-123456", "half a report");  // a writer's temporary file
  write("notes.txt", "not a report");
  write("empty.json", "");
  const auto sources = load_report_sources({dir.path(), dir.file("b.json"), dir.file("missing.json")});
  ASSERT_EQ(sources.size(), 4u);
  EXPECT_EQ(sources[0].name, dir.path() + "/a.json");
  EXPECT_EQ(sources[0].problem, Problem::Invalid);
  EXPECT_EQ(sources[0].message, "not JSON (parse error at byte 3)");
  EXPECT_EQ(sources[1].name, dir.path() + "/b.json");
  EXPECT_EQ(sources[1].problem, Problem::None);
  EXPECT_EQ(sources[1].report["run_id"], "0000000000000011");
  EXPECT_EQ(sources[2].name, dir.path() + "/empty.json");
  EXPECT_EQ(sources[2].message, "an empty file");
  EXPECT_EQ(sources[3].problem, Problem::Missing);
  EXPECT_EQ(sources[3].message, "No such file or directory");
}

TEST(AggregateSources, AFolderWithoutReportsIsMissingNotSkipped) {
  test::TempDir dir;
  const auto sources = load_report_sources({dir.path()});
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].problem, Problem::Missing);
  EXPECT_EQ(sources[0].message, "a folder without any .json report");
}

}  // namespace
}  // namespace kd
