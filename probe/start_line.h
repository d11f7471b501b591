// Threads of one measurement that start together: the range's concurrent executions (their warm runs) and the host
// links of several GPUs at once (each repeat). A thread that fails leaves the line, so the others are never kept
// waiting for it; each wait says whether every thread is still there.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kd::probe {

class StartLine {
 public:
  explicit StartLine(int n) : n_(n) {}
  // Returns when every thread still on the line has arrived (again at each round); false once one has left.
  bool arrive_and_wait() {
    std::unique_lock<std::mutex> lock(m_);
    const long round = round_;
    if (++arrived_ >= n_) start_round();
    else cv_.wait(lock, [&] { return round_ != round; });
    return !left_;
  }
  void leave() {  // a thread that failed
    std::lock_guard<std::mutex> lock(m_);
    --n_;
    left_ = true;
    if (arrived_ >= n_) start_round();
  }
  std::chrono::steady_clock::time_point t0() {  // when the last round started
    std::lock_guard<std::mutex> lock(m_);
    return t0_;
  }

 private:
  void start_round() {
    arrived_ = 0;
    ++round_;
    t0_ = std::chrono::steady_clock::now();
    cv_.notify_all();
  }
  std::mutex m_;
  std::condition_variable cv_;
  int n_;
  int arrived_ = 0;
  long round_ = 0;
  bool left_ = false;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace kd::probe
