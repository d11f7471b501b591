// Which code and stage a run gets (docs/contract.md "Verdict"), from what the worker said and how
// it ended. Pure: every branch of the chain is unit-tested on typed inputs; the report only renders
// the decision (reporters/report_builder.cpp), the supervisor alone calls it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codes.h"

namespace kd {

// How the worker process ended, as the supervisor saw it.
struct WorkerEnd {
  bool timed_out = false;
  bool interrupted = false;  // the supervisor was asked to stop (SIGINT/SIGTERM)
  bool flooded = false;      // the worker sent more than kMaxEventBytes of events and was stopped
  bool exited = false;       // exited normally (exit_status valid)
  int exit_status = 0;
  int signal = 0;            // killed by this signal
};

// A failure as the worker sent it.
struct ReportedFailure {
  Code code = Code::RuntimeError;  // RUNTIME_ERROR when it names no code we know
  std::string stage;
  std::string message;  // the worker's own text, not yet redacted
};

// The worker's "end" event: its counts and the listener's verdict.
struct EndEvent {
  int64_t ran = 0, failed = 0, skipped = 0;
  std::optional<ReportedFailure> failure;  // its stage is the last one announced when it names none
};

// What the decision needs of the worker's events.
struct WorkerEvents {
  std::optional<ReportedFailure> first_failure;  // the listener's first failing test (or suite/environment setup)
  std::optional<EndEvent> end;
  std::string last_stage;         // the last stage announced, "" before any
  std::string last_passed_stage;  // where the last test that passed was; last_stage when none did
};
// Read from the worker's typed events by reporters/worker_events.h (a line that was no event never gets here).

struct DecisionInput {
  WorkerEvents events;
  WorkerEnd worker;
  std::string last_finished_step = "none";  // the run's last marker: where a timeout or crash left off
  double timeout_s = 0;
  bool cpu_mode = false;
  bool verified = false;  // execution verified both the product and the gradient
};

// What happened after the first failure: recorded as what happened next, never instead of it.
struct AfterFailure {
  std::string event;  // "timeout", "interrupted" or "worker_failed"
  Code code = Code::WorkerFailed;
  std::string stage;  // "" when no stage was announced
  std::string message;
};

struct Decision {
  Code code = Code::WorkerFailed;
  std::string stage;    // "" when the verdict belongs to no stage
  std::string message;  // not yet redacted; "" for a pass
  bool worker_message = false;  // the message is a test's own error text: a known signature there has a hint
  std::optional<AfterFailure> after_failure;
  std::vector<std::string> warnings;
};

// The first failing test decides, whatever happened after it (SPEC "rules never bent"); then a
// timeout; a crash while loading the model; a worker that ended without a verdict; nothing ran;
// everything skipped; the listener's verdict; else the pass that the run earned.
Decision decide(const DecisionInput& in);

}  // namespace kd
