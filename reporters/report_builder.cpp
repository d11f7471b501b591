#include "report_builder.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "contract/option_table.h"
#include "redact.h"

#ifndef KD_VERSION
#define KD_VERSION "unknown"
#endif
#include "verdict/hints.h"

namespace kd {
namespace {

using nlohmann::json;

json skeleton(const RunRecord& run) {
  json requested = requested_options(run.options);
  requested["gtest_environment_ignored"] = run.gtest_environment;
  return {
      {"schema_version", kSchemaVersion},
      {"run_id", run.run_id},
      {"started_at", run.started_at},
      {"duration_ms", run.duration_ms},
      {"requested", requested},
      {"runtime",
       {{"os_family", nullptr}, {"os_name", nullptr}, {"arch", nullptr}, {"libc", nullptr}, {"compiler", nullptr},
        {"suite_version", KD_VERSION}}},  // the supervisor's own: known even when L1 did not run
      {"pytorch",
       {{"loaded", false}, {"version", nullptr}, {"cuda_compiled", nullptr}, {"hip_compiled", nullptr},
        {"backend", nullptr}, {"source", nullptr}, {"gpu_available", nullptr}, {"visible_device_count", nullptr},
        {"arch_list", nullptr}}},
      {"device", nullptr},
      {"execution",
       {{"device", nullptr}, {"product_verified", false}, {"gradient_verified", false}, {"loss", nullptr},
        {"arch_supported", nullptr}}},
      {"host", run.host},
      {"python", nullptr},
      {"app", nullptr},
      {"timing", nullptr},
      {"memory", nullptr},
      {"peer", nullptr},
      {"collective", nullptr},
      {"layers", json::array()},
      {"markers", json::array()},
      {"warnings", json::array()},
      {"error", nullptr},
      {"after_failure", nullptr},
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

json redacted(json v) {  // every string, at any depth
  if (v.is_string()) return redact(v.get<std::string>());
  if (v.is_structured())
    for (auto& item : v) item = redacted(item);
  return v;
}

bool is_scalar(const json& v) { return v.is_null() || v.is_boolean() || v.is_number() || v.is_string(); }
bool is_plain(const json& v) {  // a scalar, or a list of scalars (pytorch.arch_list)
  if (!v.is_array()) return is_scalar(v);
  for (const auto& item : v)
    if (!is_scalar(item)) return false;
  return true;
}

// Facts come from the worker, which may be broken: they land only where the report has a place
// for them and never reshape it. runtime, pytorch and execution have fixed keys taking plain
// values; device (plain values), python, app, timing, memory, peer and collective are objects the layers fill.
void apply_fact(json* report, const json& ev) {
  static const std::set<std::string> kFixed = {"runtime", "pytorch", "execution"};
  static const std::set<std::string> kOpen = {"device", "python", "app", "timing", "memory", "peer", "collective"};
  const std::string path = text(ev, "path");
  const json value = ev.contains("value") ? ev["value"] : json();
  if (path.size() < 2 || path[0] != '/') return;
  const size_t slash = path.find('/', 1);
  const std::string section = path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  if (kFixed.count(section)) {
    if (slash == std::string::npos) return;
    const std::string key = path.substr(slash + 1);
    if (key.find('/') != std::string::npos || !(*report)[section].contains(key) || !is_plain(value)) return;
    (*report)[section][key] = redacted(value);
  } else if (kOpen.count(section)) {
    if (slash == std::string::npos && !value.is_object()) return;
    if (section == "device" && (slash != std::string::npos ||
                                std::any_of(value.begin(), value.end(), [](const json& v) { return !is_scalar(v); })))
      return;
    if (!(*report)[section].is_null() && !(*report)[section].is_object()) return;
    try {
      (*report)[json::json_pointer(path)] = redacted(value);
    } catch (const json::exception&) {  // a malformed pointer is dropped
    }
  }
}

json layers_section(const std::vector<LayerInfo>& layers, const std::vector<json>& events) {
  json out = json::array();
  for (const auto& l : layers) out.push_back(layer_entry(l, events));
  return out;
}

// Steps that finished, in order; a marker of another run (or without one) is not this run's.
json markers_section(const RunRecord& run, int* foreign) {
  json out = json::array();
  for (const auto& ev : run.events) {
    if (text(ev, "ev") != "marker") continue;
    if (text(ev, "run_id") != run.run_id || text(ev, "name").empty()) {
      ++*foreign;
      continue;
    }
    const std::string stage = text(ev, "stage");
    const double t = number(ev, "t_mono_ms").get<double>() - run.start_mono_ms;
    out.push_back({{"name", ev["name"]}, {"stage", stage.empty() ? json() : json(stage)},
                   {"t_ms", std::round(std::max(t, 0.0) * 1000) / 1000}});
  }
  return out;
}

std::string last_finished(const json& markers) {
  return markers.empty() ? "none" : markers.back()["name"].get<std::string>();
}

std::string last_stage(const std::vector<json>& events) {
  std::string stage;
  for (const auto& ev : events)
    if (text(ev, "ev") == "stage") stage = text(ev, "stage");
  return stage;
}

// A pass ended at the last step that passed: a skipped step (L3.synchronize on the CPU) checked nothing.
// A test's own stage is the last one announced between its start and its end.
std::string last_passed_stage(const std::vector<json>& events) {
  std::string in_test, passed;
  for (const auto& ev : events) {
    const std::string kind = text(ev, "ev");
    if (kind == "test_start") in_test.clear();
    if (kind == "stage") in_test = text(ev, "stage");
    if (kind == "test_end" && text(ev, "status") == "passed" && !in_test.empty()) passed = in_test;
  }
  return passed.empty() ? last_stage(events) : passed;
}

// The listener's first failing test (or suite/environment setup), as it was sent: before any later crash.
const json* first_failure_event(const std::vector<json>& events) {
  for (const auto& ev : events) {
    const std::string kind = text(ev, "ev");
    if ((kind == "test_end" || kind == "setup_failure") && text(ev, "status") == "failed" && !text(ev, "code").empty())
      return &ev;
  }
  return nullptr;
}

const json* find_event(const std::vector<json>& events, const char* kind) {
  for (const auto& ev : events)
    if (text(ev, "ev") == kind) return &ev;
  return nullptr;
}

// L5's record of an out-of-memory (/memory/oom), for the phase's cause and next action.
std::optional<memory::OomEvent> oom_event(const json& memory) {
  if (!memory.is_object() || !memory.contains("oom") || !memory["oom"].is_object()) return std::nullopt;
  const json& o = memory["oom"];
  auto count = [&](const char* k) { return o.contains(k) && o[k].is_number_unsigned() ? o[k].get<uint64_t>() : uint64_t(0); };
  memory::OomEvent e;
  e.phase = text(o, "phase");
  if (o.contains("requested_bytes") && o["requested_bytes"].is_number_unsigned()) e.requested = o["requested_bytes"].get<uint64_t>();
  e.device_numbers = o.contains("device_total_bytes") && o["device_total_bytes"].is_number_unsigned();
  e.device_free = count("device_free_bytes");
  e.device_total = count("device_total_bytes");
  e.reserved = count("reserved_bytes");
  e.allocated = count("allocated_bytes");
  if (o.contains("fraction") && o["fraction"].is_number()) e.fraction = o["fraction"].get<double>();
  if (e.phase.empty()) return std::nullopt;
  return e;
}

HintContext hint_context(const json& report, const RunRecord& run) {
  HintContext c;
  auto text = [](const json& j, const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : ""; };
  c.cuda_compiled = text(report["pytorch"], "cuda_compiled");
  if (report["device"].is_object()) c.device_capability = text(report["device"], "capability");
  if (report["pytorch"]["arch_list"].is_array()) c.arch_list = report["pytorch"]["arch_list"].get<std::vector<std::string>>();
  if (report["execution"]["arch_supported"].is_boolean()) c.arch_supported = report["execution"]["arch_supported"].get<bool>();
  if (run.host.is_object() && !run.host["gpus"].empty()) c.driver_version = text(run.host["gpus"][0], "driver_version");
  c.visible_devices_env = run.visible_devices_env;
  c.oom = oom_event(report["memory"]);
  c.stage = report["stage"].is_string() ? report["stage"].get<std::string>() : "";
  return c;
}

// The cause and next action for a known error signature, from the unredacted message.
void attach_hint(json* report, Code code, const std::string& raw_message, const RunRecord& run) {
  if (!(*report)["error"].is_object()) return;
  const std::optional<Hint> h = find_hint(code, raw_message, hint_context(*report, run));
  (*report)["error"]["cause"] = h ? json(redact(h->cause)) : json();
  // One next action per report: the specific one replaces the code's fixed text in both places.
  if (h) (*report)["error"]["next_action"] = (*report)["next_action"] = h->action;
}

// A skipped test's kind, as the listener sent it (verdict/listener.h): not_applicable, or blocked by a failure.
void add_skip_kind(const json& ev, json* t) {
  const std::string kind = text(ev, "skip_kind");
  if (kind != "not_applicable" && kind != "blocked") return;  // a broken worker's: no kind rather than a guess
  (*t)["skip_kind"] = kind;
  const auto by = ev.find("blocked_by");
  if (kind != "blocked" || by == ev.end() || !by->is_object()) return;
  const std::string stage = text(*by, "stage"), code = text(*by, "code");
  if (!stage.empty() && code_from_name(code)) (*t)["blocked_by"] = {{"stage", stage}, {"code", code}};
}

// A layer whose tests all skipped: blocked when an earlier failure kept any of them from running (fixing it
// would run that one), with the first such test's blocked_by; not_applicable when none of them could apply here.
void add_layer_skip_kind(json* layer) {
  bool all_not_applicable = true;
  for (const auto& t : (*layer)["tests"]) {
    const std::string kind = text(t, "skip_kind");
    if (kind == "blocked") {
      (*layer)["skip_kind"] = kind;
      if (t.contains("blocked_by")) (*layer)["blocked_by"] = t["blocked_by"];
      return;
    }
    all_not_applicable = all_not_applicable && kind == "not_applicable";
  }
  if (all_not_applicable) (*layer)["skip_kind"] = "not_applicable";
}

const std::string kFloodedText = "the worker sent more than 16 MiB of events and was stopped";

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {} (SIG{})", sig, abbrev) : fmt::format("signal {}", sig);
}

}  // namespace

json layer_entry(const LayerInfo& l, const std::vector<json>& events) {
  json tests = json::array();
  std::set<std::string> statuses;
  for (const auto& ev : events) {
    if (text(ev, "ev") != "test_end" || text(ev, "suite") != l.suite) continue;
    json t = {{"name", text(ev, "test")}, {"status", text(ev, "status")}, {"duration_ms", number(ev, "duration_ms")}};
    if (ev.contains("code")) t["code"] = text(ev, "code");
    if (ev.contains("stage")) t["stage"] = text(ev, "stage");
    if (ev.contains("message")) t["message"] = redact(text(ev, "message"));
    if (t["status"] == "skipped") add_skip_kind(ev, &t);
    statuses.insert(t["status"].get<std::string>());
    tests.push_back(std::move(t));
  }
  const char* status = tests.empty()               ? "not_run"
                       : statuses.count("failed")  ? "failed"
                       : statuses.count("passed")  ? "passed"
                                                   : "skipped";
  json entry = {{"id", l.id}, {"suite", l.suite}, {"title", l.title}, {"status", status}, {"tests", tests}};
  if (entry["status"] == "skipped") add_layer_skip_kind(&entry);
  return entry;
}

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
                          {"cause", nullptr},
                          {"exit_code", i.exit_code},
                          {"stage", stage.empty() ? json() : json(stage)},
                          {"meaning", i.meaning},
                          {"message", redact(message)},
                          {"next_action", i.next_action}};
  }
  (*report)["next_action"] = i.next_action;
  // --device-index all: a verdict set afterwards (e.g. OUTPUT_WRITE_FAILED) is no GPU's own.
  if (report->contains("device_index")) (*report)["device_index"] = nullptr;
}

json build_report(const RunRecord& run, const std::vector<LayerInfo>& layers) {
  json report = skeleton(run);
  for (const auto& ev : run.events)
    if (text(ev, "ev") == "fact") apply_fact(&report, ev);
  report["layers"] = layers_section(layers, run.events);
  int foreign_markers = 0;
  report["markers"] = markers_section(run, &foreign_markers);
  const std::string stage = last_stage(run.events);
  const json* end = find_event(run.events, "end");
  const WorkerEnd& w = run.worker;

  // The first failing test decides, whatever happened after it (SPEC "rules never bent"): a later
  // timeout, crash or interruption is recorded as what happened next, never instead.
  const json* failure = first_failure_event(run.events);
  if (!end && failure) {
    const Code code = code_from_name(text(*failure, "code")).value_or(Code::RuntimeError);
    set_verdict(&report, code, text(*failure, "stage"), text(*failure, "message"));
    attach_hint(&report, code, text(*failure, "message"), run);
    const Code then = w.timed_out ? Code::Timeout : Code::WorkerFailed;
    const std::string what = w.timed_out     ? fmt::format("the run reached its {} s limit", run.options.timeout_s)
                             : w.interrupted ? std::string("the run was interrupted and the worker stopped")
                             : w.flooded     ? kFloodedText
                             : w.signal      ? fmt::format("the worker was killed by {}", signal_text(w.signal))
                             : w.exited      ? fmt::format("the worker exited with status {}", w.exit_status)
                                             : std::string("the worker produced no verdict");
    report["after_failure"] = {{"event", w.timed_out ? "timeout" : w.interrupted ? "interrupted" : "worker_failed"},
                               {"code", info(then).name},
                               {"stage", stage.empty() ? json() : json(stage)},
                               {"message", redact(what)}};
    report["warnings"].push_back(fmt::format("after the first failure, {}{}", what, stage.empty() ? "" : " in stage " + stage));
  } else if (w.timed_out) {
    set_verdict(&report, Code::Timeout, stage,
                fmt::format("no verdict within {} s; the worker was stopped while in stage {}; last finished step: {}",
                            run.options.timeout_s, stage.empty() ? "(start)" : stage, last_finished(report["markers"])));
  } else if (!end && !w.interrupted && !w.flooded && stage.rfind("L4.model_load", 0) == 0) {
    // The loader itself crashed the worker (a .pt2's truncated library dies by SIGBUS): the model did not
    // load, and the crash is recorded as what happened in that stage.
    const std::string what = w.signal ? fmt::format("the worker was killed by {}", signal_text(w.signal))
                             : w.exited ? fmt::format("the worker exited with status {}", w.exit_status)
                                        : std::string("the worker produced no verdict");
    set_verdict(&report, Code::ModelLoadFailed, stage,
                fmt::format("loading the model crashed the worker: {} (a truncated or corrupt model file?)", what));
    report["after_failure"] = {{"event", "worker_failed"}, {"code", info(Code::WorkerFailed).name},
                               {"stage", stage}, {"message", redact(what)}};
  } else if (!end) {
    std::string why = w.interrupted ? "the run was interrupted and the worker stopped"
                      : w.flooded   ? kFloodedText
                      : w.signal    ? fmt::format("the worker was killed by {}", signal_text(w.signal))
                      : w.exited    ? fmt::format("the worker exited with status {} without a verdict", w.exit_status)
                                    : "the worker produced no verdict";
    if (!stage.empty()) why += fmt::format(" in stage {}", stage);
    why += fmt::format("; last finished step: {}", last_finished(report["markers"]));
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
    attach_hint(&report, code, text(f, "message"), run);
  } else {
    const json& ex = report["execution"];
    const bool verified = ex["product_verified"] == true && ex["gradient_verified"] == true;
    const Code pass = !verified ? Code::SelectedTestsPassed
                      : run.options.cpu_mode() ? Code::CpuCheckPassed
                                               : Code::GpuCheckPassed;
    set_verdict(&report, pass, last_passed_stage(run.events), "");
  }
  if (end && w.signal)
    report["warnings"].push_back(fmt::format("the worker was killed by {} after its verdict", signal_text(w.signal)));
  for (const auto& ev : run.events)
    if (text(ev, "ev") == "warning") report["warnings"].push_back(redact(text(ev, "text")));
  if (foreign_markers)
    report["warnings"].push_back(fmt::format("{} marker(s) without this run's id were ignored", foreign_markers));
  if (run.malformed_events)
    report["warnings"].push_back(fmt::format("{} unreadable event line(s) from the worker", run.malformed_events));
  if (!run.options.fault.empty())
    report["warnings"].push_back(fmt::format("test-only fault injection '{}' was active: this is not a diagnosis", run.options.fault));
  return report;
}

}  // namespace kd
