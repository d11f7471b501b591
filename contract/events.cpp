#include "events.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace kd::events {
namespace {
Sink& current_sink() {
  static Sink sink;
  return sink;
}
std::string& run_id() {
  static std::string id;
  return id;
}
}  // namespace

void set_sink(Sink sink) { current_sink() = std::move(sink); }

Sink fd_sink(int fd) {
  return [fd](const std::string& line) {
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<size_t>(n);
    }
  };
}

void emit(const Event& event) {
  if (current_sink()) current_sink()(to_json(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void stage(std::string_view s) { emit(Stage{std::string(s)}); }

void fact(std::string_view pointer, const nlohmann::json& value) { emit(Fact{std::string(pointer), value}); }

void warning(std::string text) { emit(Warning{std::move(text)}); }

void set_run_id(std::string id) { run_id() = std::move(id); }

double monotonic_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

void marker(std::string_view name, std::string_view stage) {
  emit(Marker{run_id(), std::string(name), std::string(stage), monotonic_ms()});
}

void LineCollector::feed(std::string_view bytes) {
  total_ += bytes.size();
  if (overflowed()) return;
  pending_.append(bytes);
  size_t nl;
  while ((nl = pending_.find('\n')) != std::string::npos) {
    take(pending_.substr(0, nl));
    pending_.erase(0, nl + 1);
  }
  if (pending_.size() > kMaxEventLine) {  // a line without end is no event: dropped, counted as unreadable
    ++malformed_;
    pending_.clear();
    skipping_ = true;
  }
}

void LineCollector::finish() {
  if (!pending_.empty()) take(pending_);
  pending_.clear();
}

void LineCollector::take(const std::string& line) {
  if (skipping_) {  // the rest of an overlong line
    skipping_ = false;
    return;
  }
  if (line.empty()) return;
  std::optional<Event> event = from_json(nlohmann::json::parse(line, nullptr, false));  // a parse error: discarded
  if (!event) {
    ++malformed_;
    last_other_ = line.substr(0, 1000);
    return;
  }
  events_.push_back(std::move(*event));
}

}  // namespace kd::events
