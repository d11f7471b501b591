// The verdict codes of docs/contract.md. Numbers and meanings are fixed: users' scripts rely on them.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "actions.h"

namespace kd {

// In the order of their exit codes (docs/contract.md); a test checks it.
enum class Code {
  GpuCheckPassed,
  CpuCheckPassed,
  SelectedTestsPassed,  // a filtered run passed without reaching the whole fixed check
  UsageError,
  TorchMissing,
  TorchImportFailed,
  GpuBackendAbsent,
  GpuUnavailable,
  DeviceIndexInvalid,
  CheckFailed,
  OutOfMemory,
  RuntimeError,
  Timeout,
  WorkerFailed,
  OutputWriteFailed,
  ModelLoadFailed,  // L4: the user's model is missing, unreadable or not a model
  AppCheckFailed,   // L4: an application workload broke its output contract
  MemoryCheckFailed,      // L5: allocated memory grows across iterations, or the allocator misbehaves
  PerformanceBelowFloor,  // L6: a device ceiling measured below the run's floor fraction of its reference
  CollectiveUnreachable,  // L8: a rank did not join in time, or the transport between ranks failed
  GpuUnhealthy,           // L2: NVML reports uncorrected ECC errors, a failed or pending row remap / page retirement
  SuiteIncomplete,        // this build of the suite cannot run what was asked; nothing was concluded about the machine
};
constexpr Code kLastCode = Code::SuiteIncomplete;  // the codes are 0..kLastCode, in enum order

// A SUITE_INCOMPLETE message ends with this and the command that builds what is missing (fixtures/suite_build.h): that
// command is the report's next_action (the signature suite-incomplete).
inline constexpr std::string_view kBuildItWith = "; build it with: ";

struct CodeInfo {
  Code code;
  std::string_view name;         // stable, e.g. "GPU_UNAVAILABLE"
  int exit_code;                 // the process exit code and the report's exit_code
  std::string_view exit_phrase;  // what --help says after the exit code: "usage error"
  std::string_view meaning;      // one line
  std::string_view next_action;  // what the user does next
  std::optional<Action> action;  // a failure's own machine-readable action when no signature explains it; none for a pass
};

const CodeInfo& info(Code c);
std::string_view name(Code c);
int exit_code(Code c);
std::optional<Code> code_from_name(std::string_view name);
bool is_pass(Code c);

}  // namespace kd
