#include "event_types.h"

namespace kd::events {
namespace {

using nlohmann::json;

constexpr TestStatus kStatuses[] = {TestStatus::passed, TestStatus::failed, TestStatus::skipped};

bool is_text(const json& v) { return v.is_string(); }
bool is_whole(const json& v) { return v.is_number_integer(); }
bool is_number(const json& v) { return v.is_number(); }
bool is_object(const json& v) { return v.is_object(); }

// Reads the fields of one event object. A required field that is absent or of another type, or an optional one
// of another type, makes the object no event (ok() is false; what is read then is a default): a broken
// worker's line is counted, never half-read.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}
  bool ok() const { return ok_; }

  std::string text(const char* key) {
    const json* v = find(key, is_text, true);
    return v ? v->get<std::string>() : "";
  }
  std::optional<std::string> optional_text(const char* key) {
    const json* v = find(key, is_text, false);
    return v ? std::optional<std::string>(v->get<std::string>()) : std::nullopt;
  }
  int64_t whole(const char* key) {
    const json* v = find(key, is_whole, true);
    return v ? v->get<int64_t>() : 0;
  }
  double number(const char* key) {
    const json* v = find(key, is_number, true);
    return v ? v->get<double>() : 0;
  }
  json any(const char* key) {  // present, whatever it holds (null too)
    const auto it = j_.find(key);
    ok_ = ok_ && it != j_.end();
    return it != j_.end() ? *it : json();
  }
  // A string that must be one of a few words (a status): another word is as wrong as another type.
  TestStatus status(const char* key) {
    const std::string s = text(key);
    for (TestStatus t : kStatuses)
      if (s == status_name(t)) return t;
    ok_ = false;
    return TestStatus::passed;
  }
  void expect(const char* key, const char* word) { ok_ = text(key) == word && ok_; }
  std::optional<BlockedBy> blocked_by(const char* key) {
    const json* v = find(key, is_object, false);
    if (!v) return std::nullopt;
    Fields inner(*v);
    BlockedBy b{inner.text("stage"), inner.text("code")};
    ok_ = ok_ && inner.ok();
    return b;
  }
  std::optional<Failure> failure(const char* key);
  std::vector<int64_t> wholes(const char* key) {
    const json v = any(key);
    std::vector<int64_t> out;
    ok_ = ok_ && v.is_array();
    for (const json& e : v.is_array() ? v : json::array()) {
      ok_ = ok_ && e.is_number_integer();
      if (e.is_number_integer()) out.push_back(e.get<int64_t>());
    }
    return out;
  }
  std::vector<std::vector<double>> rows(const char* key) {
    const json v = any(key);
    std::vector<std::vector<double>> out;
    ok_ = ok_ && v.is_array();
    for (const json& row : v.is_array() ? v : json::array()) {
      ok_ = ok_ && row.is_array();
      out.emplace_back();
      for (const json& e : row.is_array() ? row : json::array()) {
        ok_ = ok_ && e.is_number();
        if (e.is_number()) out.back().push_back(e.get<double>());
      }
    }
    return out;
  }
  json object(const char* key) {
    const json* v = find(key, is_object, true);
    return v ? *v : json::object();
  }

 private:
  const json* find(const char* key, bool (*is)(const json&), bool required) {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      ok_ = ok_ && !required;
      return nullptr;
    }
    ok_ = ok_ && is(*it);
    return is(*it) ? &*it : nullptr;
  }
  const json& j_;
  bool ok_ = true;
};

// The failure inside "end": a test_end or setup_failure object. Its kind is checked before it is read, so that
// an end nested in an end (a hostile line) is refused at once, not read recursively.
std::optional<Failure> Fields::failure(const char* key) {
  const json* v = find(key, is_object, false);
  if (!v) return std::nullopt;
  const std::string kind = Fields(*v).text("ev");
  if (kind == TestEnd::kName || kind == SetupFailure::kName)
    if (const std::optional<Event> e = from_json(*v)) {
      if (const auto* t = std::get_if<TestEnd>(&*e)) return Failure(*t);
      return Failure(std::get<SetupFailure>(*e));
    }
  ok_ = false;
  return std::nullopt;
}

void put(json* j, const char* key, const std::optional<std::string>& v) {
  if (v) (*j)[key] = *v;
}

json body(const Start& e) { return {{"tests_to_run", e.tests_to_run}}; }
json body(const Stage& e) { return {{"stage", e.stage}}; }
json body(const Fact& e) { return {{"path", e.path}, {"value", e.value}}; }
json body(const Marker& e) { return {{"run_id", e.run_id}, {"name", e.name}, {"stage", e.stage}, {"t_mono_ms", e.t_mono_ms}}; }
json body(const Warning& e) { return {{"text", e.text}}; }
json body(const TestStart& e) { return {{"suite", e.suite}, {"test", e.test}}; }
json body(const TestEnd& e) {
  json j = {{"suite", e.suite}, {"test", e.test}, {"duration_ms", e.duration_ms}, {"status", status_name(e.status)}};
  put(&j, "code", e.code);
  put(&j, "stage", e.stage);
  put(&j, "message", e.message);
  put(&j, "skip_kind", e.skip_kind);
  if (e.blocked_by) j["blocked_by"] = {{"stage", e.blocked_by->stage}, {"code", e.blocked_by->code}};
  return j;
}
json body(const SetupFailure& e) {
  return {{"suite", e.suite}, {"status", "failed"}, {"code", e.code}, {"stage", e.stage}, {"message", e.message}};
}
json body(const End& e);
json body(const Exit& e) {
  json j = {{"status", e.status}};
  put(&j, "compute_mode", e.compute_mode);
  return j;
}
json body(const JobFailed& e) { return {{"code", e.code}, {"message", e.message}}; }
json body(const ShardRows& e) { return {{"ids", e.ids}, {"rows", e.rows}}; }
json body(const ProcessRecord& e) { return {{"record", e.record}}; }
json body(const JobDone&) { return json::object(); }

template <class T>
json wire(const T& e) {
  json j = body(e);
  j["ev"] = T::kName;
  return j;
}
json wire(const Unknown& e) { return {{"ev", e.ev}}; }

json body(const End& e) {
  const json failure = e.failure ? std::visit([](const auto& f) { return wire(f); }, *e.failure) : json();
  return {{"ran", e.ran}, {"failed", e.failed}, {"skipped", e.skipped}, {"failure", failure}};
}

Event read(const std::string& kind, Fields& f) {
  if (kind == Start::kName) return Start{f.whole("tests_to_run")};
  if (kind == Stage::kName) return Stage{f.text("stage")};
  if (kind == Fact::kName) return Fact{f.text("path"), f.any("value")};
  if (kind == Marker::kName) return Marker{f.text("run_id"), f.text("name"), f.text("stage"), f.number("t_mono_ms")};
  if (kind == Warning::kName) return Warning{f.text("text")};
  if (kind == TestStart::kName) return TestStart{f.text("suite"), f.text("test")};
  if (kind == TestEnd::kName)
    return TestEnd{f.text("suite"),         f.text("test"),          f.whole("duration_ms"),
                   f.status("status"),      f.optional_text("code"), f.optional_text("stage"),
                   f.optional_text("message"), f.optional_text("skip_kind"), f.blocked_by("blocked_by")};
  if (kind == SetupFailure::kName) {
    f.expect("status", status_name(TestStatus::failed));
    return SetupFailure{f.text("suite"), f.text("code"), f.text("stage"), f.text("message")};
  }
  if (kind == End::kName) return End{f.whole("ran"), f.whole("failed"), f.whole("skipped"), f.failure("failure")};
  if (kind == Exit::kName) return Exit{f.whole("status"), f.optional_text("compute_mode")};
  if (kind == JobFailed::kName) return JobFailed{f.text("code"), f.text("message")};
  if (kind == ShardRows::kName) return ShardRows{f.wholes("ids"), f.rows("rows")};
  if (kind == ProcessRecord::kName) return ProcessRecord{f.object("record")};
  if (kind == JobDone::kName) return JobDone{};
  return Unknown{kind};
}

}  // namespace

const char* status_name(TestStatus status) {
  switch (status) {
    case TestStatus::passed: return "passed";
    case TestStatus::failed: return "failed";
    case TestStatus::skipped: return "skipped";
  }
  return "passed";
}

json to_json(const Event& event) {
  return std::visit([](const auto& e) { return wire(e); }, event);
}

std::optional<Event> from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto ev = j.find("ev");
  if (ev == j.end() || !ev->is_string()) return std::nullopt;
  Fields f(j);
  Event e = read(ev->get<std::string>(), f);
  if (!f.ok()) return std::nullopt;
  return e;
}

}  // namespace kd::events
