#include "decision.h"

#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace kd {
namespace {

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {} (SIG{})", sig, abbrev) : fmt::format("signal {}", sig);
}

// How the worker ended, in words; `exited_suffix` follows an exit status.
std::string ending(const WorkerEnd& w, double timeout_s, const char* exited_suffix = "") {
  if (w.timed_out) return fmt::format("the run reached its {} s limit", timeout_s);
  if (w.interrupted) return "the run was interrupted and the worker stopped";
  if (w.flooded) return "the worker sent more than 16 MiB of events and was stopped";
  if (w.signal) return fmt::format("the worker was killed by {}", signal_text(w.signal));
  if (w.exited) return fmt::format("the worker exited with status {}{}", w.exit_status, exited_suffix);
  return "the worker produced no verdict";
}

}  // namespace

Decision decide(const DecisionInput& in) {
  const WorkerEvents& ev = in.events;
  const WorkerEnd& w = in.worker;
  const std::string& stage = ev.last_stage;
  const std::string in_stage = stage.empty() ? "" : " in stage " + stage;
  Decision d;
  if (!ev.end && ev.first_failure) {
    // A later timeout, crash or interruption is recorded as what happened next, never instead.
    d = {ev.first_failure->code, ev.first_failure->stage, ev.first_failure->message, true, std::nullopt, {}};
    const std::string what = ending(w, in.timeout_s);
    d.after_failure = AfterFailure{w.timed_out ? "timeout" : w.interrupted ? "interrupted" : "worker_failed",
                                   w.timed_out ? Code::Timeout : Code::WorkerFailed, stage, what};
    d.warnings.push_back("after the first failure, " + what + in_stage);
  } else if (w.timed_out) {
    d.code = Code::Timeout;
    d.stage = stage;
    d.message = fmt::format("no verdict within {} s; the worker was stopped while in stage {}; last finished step: {}",
                            in.timeout_s, stage.empty() ? "(start)" : stage, in.last_finished_step);
  } else if (!ev.end && !w.interrupted && !w.flooded && stage.rfind("L4.model_load", 0) == 0) {
    // The loader itself crashed the worker (a .pt2's truncated library dies by SIGBUS): the model did not
    // load, and the crash is recorded as what happened in that stage.
    const std::string what = ending(w, in.timeout_s);
    d.code = Code::ModelLoadFailed;
    d.stage = stage;
    d.message = fmt::format("loading the model crashed the worker: {} (a truncated or corrupt model file?)", what);
    d.after_failure = AfterFailure{"worker_failed", Code::WorkerFailed, stage, what};
  } else if (!ev.end) {
    d.code = Code::WorkerFailed;
    d.stage = stage;
    d.message = ending(w, in.timeout_s, " without a verdict") + in_stage + "; last finished step: " + in.last_finished_step;
  } else if (ev.end->ran == 0) {
    d.code = Code::UsageError;
    d.message = "the test filter matched no test (see --gtest_list_tests)";
  } else if (ev.end->failed == 0 && ev.end->skipped == ev.end->ran) {
    // A skip is never a pass: a selection of tests that all skipped checked nothing.
    d.code = Code::UsageError;
    d.message = "every selected test was skipped: nothing was checked";
  } else if (ev.end->failure) {
    d = {ev.end->failure->code, ev.end->failure->stage, ev.end->failure->message, true, std::nullopt, {}};
  } else {
    d.code = !in.verified ? Code::SelectedTestsPassed : in.cpu_mode ? Code::CpuCheckPassed : Code::GpuCheckPassed;
    d.stage = ev.last_passed_stage;
  }
  if (ev.end && w.signal) d.warnings.push_back(fmt::format("the worker was killed by {} after its verdict", signal_text(w.signal)));
  return d;
}

}  // namespace kd
