// Layer L5's judgement, torch-free and unit-tested on recorded numbers: which phase ran out of
// memory and why, and whether allocated memory grows across iterations.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kd::memory {

// "64.0 MiB", "1.50 GiB", "512 bytes".
std::string bytes_text(double bytes);

// The size an out-of-memory message says was requested: CUDA's caching allocator ("Tried to allocate
// 20.00 MiB"), or LibTorch's CPU allocator ("you tried to allocate 68719476736 bytes"). nullopt: not said.
std::optional<uint64_t> requested_bytes(const std::string& message);

struct OomEvent {
  std::string phase;                  // "load", "first_compute", "iterations" (or another step's name)
  std::optional<uint64_t> requested;  // from the error message
  bool device_numbers = false;        // false on the CPU: no allocator counters, no device free/total
  uint64_t device_free = 0, device_total = 0;
  uint64_t reserved = 0, allocated = 0;  // this run's caching allocator, read right after the failure
  std::optional<double> fraction;     // --memory-fraction: the allocator may hold at most fraction x total
};

// What the device holds that this run's allocator does not: other processes, and CUDA contexts
// (this process's own included) — total - free - reserved, never below 0.
uint64_t held_by_others(const OomEvent& e);

struct OomVerdict {
  std::string stage;    // "L5.oom.<phase>"
  std::string message;  // the phase and the numbers
  std::string cause;    // the likely cause
  std::string action;   // what to do next
};
OomVerdict classify_oom(const OomEvent& e);

// Allocated bytes after each iteration: growth per iteration from the first to the last (a one-time
// allocation in the first iteration is not growth), beyond tolerance_bytes per iteration is a leak.
struct Growth {
  double per_iteration = 0;  // bytes
  bool beyond = false;
  std::string message;
};
Growth judge_growth(const std::vector<uint64_t>& allocated, double tolerance_bytes);

}  // namespace kd::memory
