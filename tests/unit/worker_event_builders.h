// The worker's events as the listener and the steps send them (contract/event_types.h), for the tests of
// what the supervisor makes of them: the decision, the report, the layers' lines.
#pragma once
#include <optional>
#include <string>

#include "contract/event_types.h"

namespace kd::test {

inline events::Stage stage(const std::string& s) { return {s}; }
inline events::Fact fact(const std::string& path, const nlohmann::json& value) { return {path, value}; }
inline events::Marker marker(const std::string& name, const std::string& st, double t_mono_ms, const std::string& run_id) {
  return {run_id, name, st, t_mono_ms};
}
inline events::TestStart test_start(const std::string& suite, const std::string& test) { return {suite, test}; }

inline events::TestEnd test_end(const std::string& suite, const std::string& test, events::TestStatus status,
                                int64_t duration_ms = 1) {
  events::TestEnd t;
  t.suite = suite;
  t.test = test;
  t.status = status;
  t.duration_ms = duration_ms;
  return t;
}
inline events::TestEnd passed(const std::string& suite, const std::string& test) {
  return test_end(suite, test, events::TestStatus::passed);
}
inline events::TestEnd failed(const std::string& suite, const std::string& test, const std::string& code,
                              const std::string& st, const std::string& message) {
  events::TestEnd t = test_end(suite, test, events::TestStatus::failed);
  t.code = code;
  t.stage = st;
  t.message = message;
  return t;
}
// A skip of the kind given (checked by the reader, so any word), blocked by that failure when there is one.
inline events::TestEnd skipped(const std::string& suite, const std::string& test, const std::string& message,
                               const std::string& kind, std::optional<events::BlockedBy> blocked_by = std::nullopt) {
  events::TestEnd t = test_end(suite, test, events::TestStatus::skipped, 0);
  t.message = message;
  t.skip_kind = kind;
  t.blocked_by = std::move(blocked_by);
  return t;
}

inline events::End end(int64_t ran, int64_t failures, int64_t skipped_tests = 0,
                       std::optional<events::Failure> failure = std::nullopt) {
  return {ran, failures, skipped_tests, std::move(failure)};
}

}  // namespace kd::test
