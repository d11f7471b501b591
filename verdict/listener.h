// The GoogleTest listener that turns test results into events and the verdict:
// the first failing test (or suite/unit setup) decides code and stage. A skip is
// never a pass, and later tests skipped by --gtest_fail_fast do not hide the failure:
// they are skips blocked by it.
#pragma once
#include <functional>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kd {

// Properties a failing test records (RecordProperty) so that gtest's own XML/JSON carry them too.
inline constexpr const char* kCodeProperty = "code";
inline constexpr const char* kStageProperty = "stage";

// Records code and stage on the running test and fails it with the message.
void fail_test(std::string_view code_name, std::string_view stage, const std::string& message);

// A skip is one of two kinds (the test_end event's "skip_kind"), recorded on the test as properties:
// - "not_applicable": the check cannot apply on this machine or in this run (the CPU, one GPU, an option not
//   given, a LibTorch without the feature): running it again here would skip again.
// - "blocked": an earlier failure kept it from running ("blocked_by": that failure's stage and code): fixing the
//   failure would run it. A user's choice (no --model, --python or --extension) is "not_applicable" too: the
//   run was not asked to check it, and nothing failed.
inline constexpr const char* kSkipKindProperty = "skip_kind";
inline constexpr const char* kBlockedByStageProperty = "blocked_by_stage";
inline constexpr const char* kBlockedByCodeProperty = "blocked_by_code";
inline constexpr const char* kNotApplicable = "not_applicable";
inline constexpr const char* kBlocked = "blocked";

// Skip the running test with the reason; the caller returns right after (as after GTEST_SKIP).
void skip_not_applicable(const std::string& why);
// Skip it because the failure at STAGE with CODE_NAME came first and was reported by an earlier test.
void skip_blocked(std::string_view stage, std::string_view code_name, const std::string& message);

class VerdictListener : public testing::EmptyTestEventListener {
 public:
  using Emit = std::function<void(const nlohmann::json&)>;
  explicit VerdictListener(Emit emit) : emit_(std::move(emit)) {}

  void OnTestProgramStart(const testing::UnitTest& unit) override;
  void OnEnvironmentsSetUpEnd(const testing::UnitTest& unit) override;
  void OnTestStart(const testing::TestInfo& test) override;
  void OnTestEnd(const testing::TestInfo& test) override;
  void OnTestSuiteEnd(const testing::TestSuite& suite) override;
  void OnTestProgramEnd(const testing::UnitTest& unit) override;

 private:
  void note_ad_hoc(const testing::TestResult& result, const std::string& where);
  void describe_skip(const testing::TestResult& result, nlohmann::json* ev) const;
  void first_failure(const nlohmann::json& failure);
  Emit emit_;
  nlohmann::json first_failure_;  // null until something fails
  std::set<std::string> noted_;   // where an ad-hoc failure was already taken
  int ran_ = 0, failed_ = 0, skipped_ = 0;
};

}  // namespace kd
