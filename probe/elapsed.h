#pragma once
// Milliseconds since a steady-clock instant: how the probe times what it measures.
#include <chrono>

namespace kd::probe {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kd::probe
