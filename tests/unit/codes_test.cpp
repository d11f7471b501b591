// The verdict codes are a contract (docs/contract.md "Verdict codes"): users' scripts read the
// exit code and the name, and the next action is what the user is told to do.
#include "verdict/codes.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace kd {
namespace {

struct Expected {
  Code code;
  const char* name;
  int exit_code;
  const char* next_action;
};

// In enum order, as docs/contract.md lists them.
const Expected kSpec[] = {
    {Code::GpuCheckPassed, "GPU_CHECK_PASSED", 0, "move to a small input of the application"},
    {Code::CpuCheckPassed, "CPU_CHECK_PASSED", 0, "conclude nothing about CUDA or ROCm"},
    {Code::SelectedTestsPassed, "SELECTED_TESTS_PASSED", 0, nullptr},
    {Code::UsageError, "USAGE_ERROR", 2, "the message says which argument and why"},
    {Code::TorchMissing, "TORCH_MISSING", 3, "check the interpreter / library path, install"},
    {Code::TorchImportFailed, "TORCH_IMPORT_FAILED", 4, "check the package and its dependencies (ABI, missing .so)"},
    {Code::GpuBackendAbsent, "GPU_BACKEND_ABSENT", 5, "install a build that matches your GPU stack"},
    {Code::GpuUnavailable, "GPU_UNAVAILABLE", 6, "check device visibility, driver, permissions"},
    {Code::DeviceIndexInvalid, "DEVICE_INDEX_INVALID", 7, "check the requested index and visibility"},
    {Code::CheckFailed, "CHECK_FAILED", 8, "read the reported stage before running a model"},
    {Code::OutOfMemory, "OUT_OF_MEMORY", 9, "read the reported stage"},
    {Code::RuntimeError, "RUNTIME_ERROR", 9, "read the reported stage"},
    {Code::Timeout, "TIMEOUT", 10, "treat as a failure; inspect the environment"},
    {Code::WorkerFailed, "WORKER_FAILED", 11, "treat as a failure; inspect the environment"},
    {Code::OutputWriteFailed, "OUTPUT_WRITE_FAILED", 12, "pick a new, writable file name"},
    {Code::ModelLoadFailed, "MODEL_LOAD_FAILED", 13, nullptr},
    {Code::AppCheckFailed, "APP_CHECK_FAILED", 14, nullptr},
    {Code::PerformanceBelowFloor, "PERFORMANCE_BELOW_FLOOR", 16, nullptr},
    {Code::MemoryCheckFailed, "MEMORY_CHECK_FAILED", 15, nullptr},
    {Code::GpuUnhealthy, "GPU_UNHEALTHY", 18, nullptr},
    {Code::CollectiveUnreachable, "COLLECTIVE_UNREACHABLE", 17, nullptr},
    {Code::SuiteIncomplete, "SUITE_INCOMPLETE", 19, nullptr},
};

TEST(Codes, NamesExitCodesAndNextActionsMatchTheSpec) {
  for (const auto& e : kSpec) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(name(e.code), e.name);
    EXPECT_EQ(exit_code(e.code), e.exit_code);
    EXPECT_EQ(info(e.code).code, e.code);
    EXPECT_FALSE(info(e.code).meaning.empty());
    if (e.next_action) {
      EXPECT_EQ(info(e.code).next_action, e.next_action);
    }
    EXPECT_FALSE(info(e.code).next_action.empty());
  }
}

// The enum lists the codes in the order of their numbers, as docs/contract.md does: a reader finds 15 before 16.
TEST(Codes, ExitCodesInEnumOrder) {
  std::vector<int> exits;
  for (int c = 0; c <= static_cast<int>(kLastCode); ++c) exits.push_back(exit_code(static_cast<Code>(c)));
  EXPECT_EQ(exits, (std::vector<int>{0, 0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_TRUE(std::is_sorted(exits.begin(), exits.end()));
}

TEST(Codes, NamesAreUniqueAndRoundTrip) {
  std::set<std::string_view> names;
  for (const auto& e : kSpec) {
    EXPECT_TRUE(names.insert(name(e.code)).second) << "duplicate name " << name(e.code);
    const std::optional<Code> back = code_from_name(name(e.code));
    ASSERT_TRUE(back.has_value()) << e.name;
    EXPECT_EQ(*back, e.code) << e.name;
  }
}

TEST(Codes, UnknownNamesAreRejected) {
  for (const char* n : {"", "gpu_check_passed", "GPU_CHECK_PASSED ", "PASSED", "13"})
    EXPECT_FALSE(code_from_name(n).has_value()) << "'" << n << "'";
}

TEST(Codes, OnlyTheThreePassesPass) {
  for (const auto& e : kSpec) EXPECT_EQ(is_pass(e.code), e.exit_code == 0) << e.name;
}

}  // namespace
}  // namespace kd
