#include "report_builder.h"

#include <csignal>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "redact.h"

namespace kd {
namespace {

using nlohmann::json;

json skeleton(const RunRecord& run) {
  const Options& o = run.options;
  return {
      {"schema_version", kSchemaVersion},
      {"run_id", run.run_id},
      {"started_at", run.started_at},
      {"duration_ms", run.duration_ms},
      {"requested",
       {{"device", o.device},
        {"device_index", o.cpu_mode() ? json() : json(o.device_index)},
        {"timeout_s", o.timeout_s},
        {"report_file", o.output.has_value()},
        {"layers", o.layers.empty() ? json() : json(o.layers)},
        {"gtest_filter", o.gtest_value("filter").empty() ? json() : json(o.gtest_value("filter"))},
        {"in_process", o.in_process},
        {"fault_injection", o.fault.empty() ? json() : json(o.fault)}}},
      {"runtime",
       {{"os_family", nullptr}, {"os_name", nullptr}, {"arch", nullptr}, {"libc", nullptr}, {"compiler", nullptr},
        {"suite_version", nullptr}}},
      {"pytorch",
       {{"loaded", false}, {"version", nullptr}, {"cuda_compiled", nullptr}, {"hip_compiled", nullptr},
        {"backend", nullptr}, {"source", nullptr}, {"gpu_available", nullptr}, {"visible_device_count", nullptr}}},
      {"device", nullptr},
      {"execution", {{"device", nullptr}, {"product_verified", false}, {"gradient_verified", false}, {"loss", nullptr}}},
      {"host", nullptr},
      {"layers", json::array()},
      {"warnings", json::array()},
      {"error", nullptr},
  };
}

// Worker events are checked, not trusted (a worker may be broken): a field of the wrong
// type reads as absent instead of throwing in the supervisor.
std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
json number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? *it : json(0);
}

bool is_scalar(const json& v) { return v.is_null() || v.is_boolean() || v.is_number() || v.is_string(); }

json redacted(json v) {
  if (v.is_string()) return redact(v.get<std::string>());
  if (v.is_object())
    for (auto& [k, item] : v.items())
      if (item.is_string()) item = redact(item.get<std::string>());
  return v;
}

// Facts land only where the report has a place for them: a field the report already has
// ("/pytorch/version") takes a plain value, and "/device" an object of plain values.
void apply_fact(json* report, const json& ev) {
  static const std::set<std::string> kSections = {"runtime", "pytorch", "execution"};
  const std::string path = text(ev, "path");
  const json value = ev.contains("value") ? ev["value"] : json();
  if (path == "/device") {
    if (!value.is_object()) return;
    for (const auto& item : value) if (!is_scalar(item)) return;
    (*report)["device"] = redacted(value);
    return;
  }
  const size_t slash = path.find('/', 1);
  if (path.empty() || path[0] != '/' || slash == std::string::npos || !is_scalar(value)) return;
  const std::string section = path.substr(1, slash - 1), key = path.substr(slash + 1);
  if (!kSections.count(section) || !(*report)[section].contains(key)) return;
  (*report)[section][key] = redacted(value);
}

json layers_section(const std::vector<LayerInfo>& layers, const std::vector<json>& events) {
  json out = json::array();
  for (const auto& l : layers) {
    json tests = json::array();
    std::set<std::string> statuses;
    for (const auto& ev : events) {
      if (text(ev, "ev") != "test_end" || text(ev, "suite") != l.suite) continue;
      json t = {{"name", text(ev, "test")}, {"status", text(ev, "status")}, {"duration_ms", number(ev, "duration_ms")}};
      if (ev.contains("code")) t["code"] = text(ev, "code");
      if (ev.contains("stage")) t["stage"] = text(ev, "stage");
      if (ev.contains("message")) t["message"] = redact(text(ev, "message"));
      statuses.insert(t["status"].get<std::string>());
      tests.push_back(std::move(t));
    }
    const char* status = tests.empty()               ? "not_run"
                         : statuses.count("failed")  ? "failed"
                         : statuses.count("passed")  ? "passed"
                                                     : "skipped";
    out.push_back({{"id", l.id}, {"suite", l.suite}, {"title", l.title}, {"status", status}, {"tests", tests}});
  }
  return out;
}

std::string last_stage(const std::vector<json>& events) {
  std::string stage;
  for (const auto& ev : events)
    if (text(ev, "ev") == "stage") stage = text(ev, "stage");
  return stage;
}

const json* find_event(const std::vector<json>& events, const char* kind) {
  for (const auto& ev : events)
    if (text(ev, "ev") == kind) return &ev;
  return nullptr;
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {} (SIG{})", sig, abbrev) : fmt::format("signal {}", sig);
}

}  // namespace

void set_verdict(json* report, Code code, const std::string& stage, const std::string& message) {
  const CodeInfo& i = info(code);
  (*report)["code"] = i.name;
  (*report)["exit_code"] = i.exit_code;
  (*report)["status"] = is_pass(code) ? "passed" : "failed";
  (*report)["stage"] = stage.empty() ? json() : json(stage);
  if (is_pass(code)) {
    (*report)["error"] = nullptr;
  } else {
    (*report)["error"] = {{"code", i.name},
                          {"exit_code", i.exit_code},
                          {"stage", stage.empty() ? json() : json(stage)},
                          {"meaning", i.meaning},
                          {"message", redact(message)},
                          {"next_action", i.next_action}};
  }
  (*report)["next_action"] = i.next_action;
}

json build_report(const RunRecord& run, const std::vector<LayerInfo>& layers) {
  json report = skeleton(run);
  for (const auto& ev : run.events)
    if (text(ev, "ev") == "fact") apply_fact(&report, ev);
  report["layers"] = layers_section(layers, run.events);
  const std::string stage = last_stage(run.events);
  const json* end = find_event(run.events, "end");
  const WorkerEnd& w = run.worker;

  if (w.timed_out) {
    set_verdict(&report, Code::Timeout, stage,
                fmt::format("no verdict within {} s; the worker was stopped while in stage {}", run.options.timeout_s,
                            stage.empty() ? "(start)" : stage));
  } else if (!end) {
    std::string why = w.interrupted ? "the run was interrupted and the worker stopped"
                      : w.signal    ? fmt::format("the worker was killed by {}", signal_text(w.signal))
                      : w.exited    ? fmt::format("the worker exited with status {} without a verdict", w.exit_status)
                                    : "the worker produced no verdict";
    if (!stage.empty()) why += fmt::format(" in stage {}", stage);
    set_verdict(&report, Code::WorkerFailed, stage, why);
  } else if (number(*end, "ran") == 0) {
    set_verdict(&report, Code::UsageError, "", "the test filter matched no test (see --gtest_list_tests)");
  } else if (number(*end, "failed") == 0 && number(*end, "skipped") == number(*end, "ran")) {
    // A skip is never a pass: a selection of tests that all skipped checked nothing.
    set_verdict(&report, Code::UsageError, "", "every selected test was skipped: nothing was checked");
  } else if (end->contains("failure") && (*end)["failure"].is_object()) {
    const json& f = (*end)["failure"];
    const Code code = code_from_name(text(f, "code")).value_or(Code::RuntimeError);
    set_verdict(&report, code, f.contains("stage") ? text(f, "stage") : stage, text(f, "message"));
  } else {
    const json& ex = report["execution"];
    const bool verified = ex["product_verified"] == true && ex["gradient_verified"] == true;
    const Code pass = !verified ? Code::SelectedTestsPassed
                      : run.options.cpu_mode() ? Code::CpuCheckPassed
                                               : Code::GpuCheckPassed;
    set_verdict(&report, pass, stage, "");
  }
  if (end && w.signal)
    report["warnings"].push_back(fmt::format("the worker was killed by {} after its verdict", signal_text(w.signal)));
  if (run.malformed_events)
    report["warnings"].push_back(fmt::format("{} unreadable event line(s) from the worker", run.malformed_events));
  if (!run.options.fault.empty())
    report["warnings"].push_back(fmt::format("test-only fault injection '{}' was active: this is not a diagnosis", run.options.fault));
  return report;
}

}  // namespace kd
