// The GoogleTest listener that turns test results into events and the verdict:
// the first failing test (or suite/unit setup) decides code and stage. A skip is
// never a pass, and later tests skipped by --gtest_fail_fast do not hide the failure.
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
  void first_failure(const nlohmann::json& failure);
  Emit emit_;
  nlohmann::json first_failure_;  // null until something fails
  std::set<std::string> noted_;   // where an ad-hoc failure was already taken
  int ran_ = 0, failed_ = 0, skipped_ = 0;
};

}  // namespace kd
