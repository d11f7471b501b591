// A shared GPU (docs/shared-gpus.md): whether other processes used the GPU while a measurement ran, whether its
// floor may then be applied, and how much memory a step may take for itself while others hold some. Pure,
// unit-tested on recorded numbers; the facts come from NVML (fixtures/gpu_watch.h) or, where NVML cannot tell,
// from the memory the driver reports in use beyond this run's own.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace kd::sharing {

// Another process whose largest share of the GPU's SMs stayed below this (percent) did not compute: it only held memory.
inline constexpr int64_t kIdlePercent = 5;
// Memory held beyond what this run's caching allocator reserved: this process's CUDA context and its libraries'
// workspaces stay below it; above it, other processes hold memory (the fallback's only sign of them). NVML's own
// count of memory no listed process holds (the driver's reserve) stays below it too.
inline constexpr uint64_t kOutsideAllowance = uint64_t(2) << 30;
// What a step may take of the free memory for its own buffers (L6, L5's workload), shared as the sweep's is.
inline constexpr double kStepShare = 0.9;

enum class Source { Nvml, DriverMemory };
const char* name(Source source);  // "nvml", "driver_memory"

// What was seen of other processes on the GPU over one window (before a measurement, or while it ran).
struct Seen {
  Source source = Source::DriverMemory;
  std::optional<int64_t> other_processes;        // NVML: compute processes that are not this run's (the worker, its jobs)
  std::optional<uint64_t> other_memory_bytes;    // NVML: what they hold; driver_memory: total - free - this run's reserved
  std::optional<uint64_t> unlisted_memory_bytes; // NVML: memory in use that no listed process holds (processes it hides)
  std::optional<int64_t> utilization_percent;    // the GPU's utilization, the largest NVML reported
  std::optional<int64_t> other_sm_percent;       // NVML: the largest SM share of another process (0: none computed)
  int64_t samples = 0;                           // NVML's looks at the GPU in the window
  // NVML: another process was seen computing (kIdlePercent or more) in an earlier window of this run. NVML samples
  // each process's share every 1/6 s to 1 s: a short measurement can see none of a neighbour that still computes
  // (an H100 with four runs at once: "up to 0 %" of two processes that had 48 % a second before, the matmul at
  // half its figure).
  bool others_computed_earlier = false;
  std::string fallback_reason;                   // driver_memory: why NVML could not tell
};

// Processes to leave room for: NVML's count (one more when memory is held by processes it does not list); with the
// fallback, 1 when memory beyond this run's is held, else 0.
int64_t others(const Seen& seen);

// "2 other processes (40.0 GiB)", "other processes (12.0 GiB beyond this run's; NVML cannot tell: ...)"; "" when none.
std::string describe(const Seen& seen);

struct Contention {
  bool contended = false;
  std::string what;  // what was seen: the processes, what they held, the utilization (when contended)
};

// Whether other processes used the GPU during a measurement: NVML lists another compute process whose SM share
// reached kIdlePercent (or whose share NVML does not report, or while a process this run saw computing earlier is
// listed: others_computed_earlier), or memory beyond kOutsideAllowance is held by processes
// NVML does not list; with the fallback, memory beyond kOutsideAllowance held outside this run's allocator. A process
// that only held memory did not compete for the SMs or the memory's bandwidth.
Contention judge(const Seen& during);

// A floor check of a measurement that others may have shared.
struct Floor {
  enum class Outcome { Judged, NotJudged };  // NotJudged: a visible skip (not_applicable), never a failure
  Outcome outcome = Outcome::Judged;
  std::string message;  // NotJudged: "other processes used the GPU during the measurement: ...; <figure>; ..."
};
// figure: the measurement as the step words it ("bf16 matmul 289 TFLOP/s is 0.29 of the H200's 989.5 TFLOP/s");
// option: the flag that applies the floor anyway.
Floor floor_check(const Contention& c, bool judge_shared, const std::string& figure);

// Memory a step may take for itself: `fraction` of the free memory, divided among it and the others seen before it
// (others(before): N + 1 sweeps started together never take more than `fraction` of it between them), and what
// that keeps for them.
struct Budget {
  uint64_t bytes = 0;  // this step's
  uint64_t kept = 0;   // free - bytes
  int64_t others = 0;
  std::string note;  // "kept 70 % of the free memory (97.30 GiB) for 2 other processes"; "" without others
};
Budget budget(uint64_t free_bytes, double fraction, const Seen& before);

}  // namespace kd::sharing
