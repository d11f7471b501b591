// Worker -> supervisor events: one JSON object a line over a pipe. The worker emits,
// the supervisor collects; in --in-process mode the lines go to memory instead.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd::events {

using Sink = std::function<void(const std::string& line)>;

void set_sink(Sink sink);
Sink fd_sink(int fd);  // writes whole lines to fd; a broken pipe is ignored (the supervisor decides)

void emit(const nlohmann::json& event);
void stage(std::string_view stage);                             // the stage now running
void fact(std::string_view pointer, const nlohmann::json& value);  // e.g. "/pytorch/version"

// Supervisor side: splits a byte stream into events; malformed lines are counted, not fatal.
class LineCollector {
 public:
  void feed(std::string_view bytes);
  void finish();  // a last line without its newline still counts
  const std::vector<nlohmann::json>& events() const { return events_; }
  int malformed() const { return malformed_; }

 private:
  void take(const std::string& line);
  std::string pending_;
  std::vector<nlohmann::json> events_;
  int malformed_ = 0;
};

}  // namespace kd::events
