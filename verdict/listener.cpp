#include "listener.h"

#include "codes.h"

namespace kd {
namespace {

std::string property(const testing::TestResult& r, const char* key) {
  for (int i = 0; i < r.test_property_count(); ++i)
    if (std::string(r.GetTestProperty(i).key()) == key) return r.GetTestProperty(i).value();
  return "";
}

// The first line of the first failure (or skip) message: gtest prefixes file:line elsewhere.
std::string first_message(const testing::TestResult& r, bool want_skip) {
  for (int i = 0; i < r.total_part_count(); ++i) {
    const auto& part = r.GetTestPartResult(i);
    if (want_skip ? part.skipped() : part.failed()) {
      std::string m = part.message();
      if (m.rfind("Failed\n", 0) == 0) m.erase(0, 7);  // ADD_FAILURE()'s own heading
      return m.substr(0, m.find('\n'));
    }
  }
  return "";
}

// A failure without our code property is an unexpected error (e.g. an exception gtest caught).
std::string code_of(const testing::TestResult& r) {
  const std::string c = property(r, kCodeProperty);
  return code_from_name(c) ? c : std::string(name(Code::RuntimeError));
}

}  // namespace

void fail_test(std::string_view code_name, std::string_view stage, const std::string& message) {
  testing::Test::RecordProperty(kCodeProperty, std::string(code_name));
  testing::Test::RecordProperty(kStageProperty, std::string(stage));
  ADD_FAILURE() << code_name << " at " << stage << ": " << message;
}

void skip_not_applicable(const std::string& why) {
  testing::Test::RecordProperty(kSkipKindProperty, kNotApplicable);
  GTEST_SKIP() << why;
}

void skip_blocked(std::string_view stage, std::string_view code_name, const std::string& message) {
  testing::Test::RecordProperty(kSkipKindProperty, kBlocked);
  testing::Test::RecordProperty(kBlockedByStageProperty, std::string(stage));
  testing::Test::RecordProperty(kBlockedByCodeProperty, std::string(code_name));
  GTEST_SKIP() << message;
}

void VerdictListener::OnTestProgramStart(const testing::UnitTest& unit) {
  emit_({{"ev", "start"}, {"tests_to_run", unit.test_to_run_count()}});
}

void VerdictListener::OnEnvironmentsSetUpEnd(const testing::UnitTest& unit) {
  note_ad_hoc(unit.ad_hoc_test_result(), "environment");
}

void VerdictListener::OnTestStart(const testing::TestInfo& test) {
  // SetUpTestSuite has run by now: its failure comes before this test's.
  if (const testing::TestSuite* suite = testing::UnitTest::GetInstance()->current_test_suite())
    note_ad_hoc(suite->ad_hoc_test_result(), suite->name());
  emit_({{"ev", "test_start"}, {"suite", test.test_suite_name()}, {"test", test.name()}});
}

void VerdictListener::OnTestEnd(const testing::TestInfo& test) {
  const testing::TestResult& r = *test.result();
  nlohmann::json ev = {{"ev", "test_end"},
                       {"suite", test.test_suite_name()},
                       {"test", test.name()},
                       {"duration_ms", r.elapsed_time()}};
  ++ran_;
  if (r.Failed()) {
    ++failed_;
    const std::string stage = property(r, kStageProperty);
    ev["status"] = "failed";
    ev["code"] = code_of(r);
    ev["stage"] = stage.empty() ? std::string(test.test_suite_name()) + "." + test.name() : stage;
    std::string message = first_message(r, false);
    const std::string prefix = ev["code"].get<std::string>() + " at " + ev["stage"].get<std::string>() + ": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());  // fail_test()'s heading
    ev["message"] = message;
    first_failure(ev);
  } else if (r.Skipped()) {
    ++skipped_;
    ev["status"] = "skipped";
    ev["message"] = first_message(r, true);
    describe_skip(r, &ev);
  } else {
    ev["status"] = "passed";
  }
  emit_(ev);
}

void VerdictListener::OnTestSuiteEnd(const testing::TestSuite& suite) {
  note_ad_hoc(suite.ad_hoc_test_result(), suite.name());
}

void VerdictListener::OnTestProgramEnd(const testing::UnitTest& unit) {
  note_ad_hoc(unit.ad_hoc_test_result(), "environment");
  nlohmann::json end = {{"ev", "end"}, {"ran", ran_}, {"failed", failed_}, {"skipped", skipped_}};
  end["failure"] = first_failure_;
  emit_(end);
}

// The kind the test recorded (skip_not_applicable, skip_blocked). A skip without one is either GoogleTest's own
// after a failure (--gtest_fail_fast, a failed suite setup: no message), blocked by the first failure, or a plain
// GTEST_SKIP: the test saying it does not apply.
void VerdictListener::describe_skip(const testing::TestResult& r, nlohmann::json* ev) const {
  std::string kind = property(r, kSkipKindProperty);
  nlohmann::json by;
  if (kind == kBlocked) {
    by = {{"stage", property(r, kBlockedByStageProperty)}, {"code", property(r, kBlockedByCodeProperty)}};
  } else if (kind.empty() && (*ev)["message"] == "" && first_failure_.is_object()) {
    kind = kBlocked;
    by = {{"stage", first_failure_["stage"]}, {"code", first_failure_["code"]}};
  } else {
    kind = kNotApplicable;
  }
  (*ev)["skip_kind"] = kind;
  if (!by.is_null()) (*ev)["blocked_by"] = by;
}

// Failures outside any test (SetUpTestSuite, TearDownTestSuite, an Environment) land here.
void VerdictListener::note_ad_hoc(const testing::TestResult& r, const std::string& where) {
  if (!r.Failed() || !noted_.insert(where).second) return;
  ++failed_;
  const std::string stage = property(r, kStageProperty);
  nlohmann::json ev = {{"ev", "setup_failure"},
                       {"suite", where},
                       {"status", "failed"},
                       {"code", code_of(r)},
                       {"stage", stage.empty() ? where + ".setup" : stage},
                       {"message", first_message(r, false)}};
  first_failure(ev);
  emit_(ev);
}

void VerdictListener::first_failure(const nlohmann::json& failure) {
  if (first_failure_.is_null()) first_failure_ = failure;
}

}  // namespace kd
