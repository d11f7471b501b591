// The events of this tool's processes as types: the worker's to the supervisor, and a job's to the step that
// started it: one struct per kind ("ev" on the wire), each with the fields
// that kind carries. The wire is one JSON object a line (contract/events.h); to_json and from_json are the
// only places that know its keys, so an emitter cannot misspell one and a reader switches over the kinds.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd::events {

// The worker's tests are about to run.
struct Start {
  static constexpr const char* kName = "start";
  int64_t tests_to_run = 0;
};

// The stage now running, e.g. "L3.product".
struct Stage {
  static constexpr const char* kName = "stage";
  std::string stage;
};

// A measured fact for the report: a JSON pointer and a value (contract/report_fields.h says where one may go).
struct Fact {
  static constexpr const char* kName = "fact";
  std::string path;
  nlohmann::json value;
};

// A step of the work finished (contract/events.h marker()).
struct Marker {
  static constexpr const char* kName = "marker";
  std::string run_id, name, stage;  // stage "": before any stage
  double t_mono_ms = 0;             // CLOCK_MONOTONIC
};

// A warning for the report, the worker's own words.
struct Warning {
  static constexpr const char* kName = "warning";
  std::string text;
};

struct TestStart {
  static constexpr const char* kName = "test_start";
  std::string suite, test;
};

enum class TestStatus { passed, failed, skipped };
const char* status_name(TestStatus status);  // "passed", "failed", "skipped"

// The failure that kept a skipped test from running (fixtures/listener.h skip_blocked).
struct BlockedBy {
  std::string stage, code;
};

struct TestEnd {
  static constexpr const char* kName = "test_end";
  std::string suite, test;
  int64_t duration_ms = 0;
  TestStatus status = TestStatus::passed;
  std::optional<std::string> code, stage;  // a failure's
  std::optional<std::string> message;      // a failure's or a skip's first line
  std::optional<std::string> skip_kind;    // a skip's: "not_applicable" or "blocked" (checked by the reader)
  std::optional<BlockedBy> blocked_by;     // a blocked skip's
};

// A suite's or the environment's setup failed outside any test ("status": "failed" on the wire).
struct SetupFailure {
  static constexpr const char* kName = "setup_failure";
  std::string suite, code, stage, message;
};

// The listener's verdict: its counts and the first failure, sent whole as the event it was.
using Failure = std::variant<TestEnd, SetupFailure>;
struct End {
  static constexpr const char* kName = "end";
  int64_t ran = 0, failed = 0, skipped = 0;
  std::optional<Failure> failure;  // null on the wire when nothing failed
};

// The worker's last event, sent after End as it ends with `status`: its own work is over. What remains is the
// kernel's (unmapping its memory, releasing its GPU context: about 0.1 s on an H200), which the verdict does
// not wait for (runner/supervisor.cpp) unless the GPU's compute mode, sent here once L2 read it, is not
// "default": then the next process could not use the GPU until this one is gone, and the supervisor waits.
struct Exit {
  static constexpr const char* kName = "exit";
  int64_t status = 0;
  std::optional<std::string> compute_mode;
};

// What a job that a step starts says (L4's batch job and shards, the CPU re-run of a model, L5's range jobs:
// contract/run_plan.h), on its standard output in the worker's words; the step reads it back with the same
// collector (fixtures/child_process.h). Its progress is Stage events (a range job's phase), then one of these.

// The job failed: the verdict code of what failed ("OUT_OF_MEMORY", "APP_CHECK_FAILED", ...) and the first line of why.
struct JobFailed {
  static constexpr const char* kName = "job_failed";
  std::string code, message;
};

// A shard of L4 across devices computed these input ids (in its own output order) and their output rows.
struct ShardRows {
  static constexpr const char* kName = "shard_rows";
  std::vector<int64_t> ids;
  std::vector<std::vector<double>> rows;
};

// One process of L5's processes axis, as the report's row of it says (contract/report_parts.h, process_*).
struct ProcessRecord {
  static constexpr const char* kName = "process_record";
  nlohmann::json record;
};

// The job's work is done (what it made is in its files, or in the event before).
struct JobDone {
  static constexpr const char* kName = "job_done";
};

// A kind this build does not know (a newer worker's): accepted, as a line always was, and ignored by readers.
struct Unknown {
  std::string ev;
};

using Event = std::variant<Start, Stage, Fact, Marker, Warning, TestStart, TestEnd, SetupFailure, End, Exit, JobFailed,
                           ShardRows, ProcessRecord, JobDone, Unknown>;

// The event as its wire object.
nlohmann::json to_json(const Event& event);
// A wire object as its event; nothing when it is none: no object, no string "ev", or a known kind with a
// required field absent or of another type (an optional one may be absent or null). Never throws.
std::optional<Event> from_json(const nlohmann::json& j);

}  // namespace kd::events
