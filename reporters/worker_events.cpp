#include "worker_events.h"

namespace kd {
namespace {

Code code_or_runtime_error(const std::string& name) { return code_from_name(name).value_or(Code::RuntimeError); }

// A failure as the listener sent it; stage_if_none when it names no stage.
ReportedFailure reported(const events::TestEnd& t, const std::string& stage_if_none) {
  return {code_or_runtime_error(t.code.value_or("")), t.stage.value_or(stage_if_none), t.message.value_or("")};
}
ReportedFailure reported(const events::SetupFailure& s, const std::string&) {
  return {code_or_runtime_error(s.code), s.stage, s.message};
}

}  // namespace

WorkerEvents read_worker_events(const std::vector<events::Event>& events) {
  WorkerEvents out;
  std::string in_test, passed;  // a test's own stage is the last one announced between its start and its end
  const events::Failure* end_failure = nullptr;
  for (const auto& ev : events) {
    if (const auto* s = std::get_if<events::Stage>(&ev)) out.last_stage = in_test = s->stage;
    if (std::holds_alternative<events::TestStart>(ev)) in_test.clear();
    // The listener's first failure as it was sent: before any later crash.
    if (const auto* t = std::get_if<events::TestEnd>(&ev)) {
      if (t->status == events::TestStatus::passed && !in_test.empty()) passed = in_test;
      if (t->status == events::TestStatus::failed && !t->code.value_or("").empty() && !out.first_failure)
        out.first_failure = reported(*t, "");
    }
    if (const auto* s = std::get_if<events::SetupFailure>(&ev))
      if (!s->code.empty() && !out.first_failure) out.first_failure = reported(*s, "");
    if (const auto* e = std::get_if<events::End>(&ev); e && !out.end) {
      out.end = EndEvent{e->ran, e->failed, e->skipped, std::nullopt};
      if (e->failure) end_failure = &*e->failure;
    }
  }
  if (end_failure)
    out.end->failure = std::visit([&](const auto& f) { return reported(f, out.last_stage); }, *end_failure);
  // A pass ended at the last step that passed: a skipped step (L3.synchronize on the CPU) checked nothing.
  out.last_passed_stage = passed.empty() ? out.last_stage : passed;
  return out;
}

}  // namespace kd
