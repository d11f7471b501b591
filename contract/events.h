// Worker -> supervisor events: one JSON object a line over a pipe, typed at both ends (contract/event_types.h).
// The worker emits, the supervisor collects; in --in-process mode the lines go to memory instead.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_types.h"

namespace kd::events {

using Sink = std::function<void(const std::string& line)>;

void set_sink(Sink sink);
Sink fd_sink(int fd);  // writes whole lines to fd; a broken pipe is ignored (the supervisor decides)

void emit(const Event& event);
void stage(std::string_view stage);                             // the stage now running
void fact(std::string_view pointer, const nlohmann::json& value);  // e.g. "/pytorch/version"
void warning(std::string text);                                    // for the report's warnings

// A step of the work *finished* (read_parameters, load_library, load_weights, prepare_data, transfer,
// compute, write): emitted after it, never before, with the run id and a CLOCK_MONOTONIC time in ms
// (one clock for the whole machine, so the supervisor can place it in its own run).
void set_run_id(std::string run_id);
void marker(std::string_view name, std::string_view stage);
double monotonic_ms();

// Supervisor side: splits a byte stream into events; malformed lines are counted, not fatal. A line is
// malformed when it is no JSON, or no event (from_json: no string "ev", a field absent or of another type).
// What the supervisor reads from a worker is bounded: a worker that prints without end (a loop, a broken
// build) cannot make the supervisor hold gigabytes. Past the bound the supervisor stops the worker.
inline constexpr size_t kMaxEventBytes = 16u << 20, kMaxEventLine = 1u << 20;

class LineCollector {
 public:
  void feed(std::string_view bytes);
  bool overflowed() const { return total_ > kMaxEventBytes; }
  void finish();  // a last line without its newline still counts
  const std::vector<Event>& events() const { return events_; }
  int malformed() const { return malformed_; }
  // The last line that was no event (a job's log holds what it printed besides its events), at most 1000 bytes.
  const std::string& last_other_line() const { return last_other_; }

 private:
  void take(const std::string& line);
  std::string pending_;
  size_t total_ = 0;
  bool skipping_ = false;
  std::vector<Event> events_;
  int malformed_ = 0;
  std::string last_other_;
};

}  // namespace kd::events
