#include "report_check.h"

#include <cstdint>
#include <regex>

#include <fmt/format.h>

#include "verdict/codes.h"

namespace kd {
namespace {

using nlohmann::json;

std::string type_of(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// The checks of one object, collecting the first problem with its dotted path.
class Checker {
 public:
  Checker(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  // key must be present with one of the kinds in `kinds` ("string", "null", "object", ...).
  const json* need(const char* key, std::initializer_list<const char*> kinds) {
    if (problem) return nullptr;
    const auto it = j_.find(key);
    if (it == j_.end()) return fail(fmt::format("'{}' is missing", name(key)));
    for (const char* k : kinds)
      if (is(*it, k)) return &*it;
    return fail(fmt::format("'{}' must be {}, not {}", name(key), fmt::join(kinds, " or "), type_of(*it)));
  }

  std::string name(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  std::optional<std::string> problem;

 private:
  static bool is(const json& v, std::string_view kind) {
    return (kind == "string" && v.is_string()) || (kind == "null" && v.is_null()) ||
           (kind == "object" && v.is_object()) || (kind == "array" && v.is_array()) ||
           (kind == "boolean" && v.is_boolean()) || (kind == "integer" && v.is_number_integer());
  }
  const json* fail(std::string why) {
    problem = std::move(why);
    return nullptr;
  }

  const json& j_;
  std::string path_;
};

std::optional<std::string> verdict_problem(const json& r) {
  Checker c(r, "");
  const json* version = c.need("schema_version", {"string"});
  const json* status = c.need("status", {"string"});
  const json* code = c.need("code", {"string"});
  const json* exit = c.need("exit_code", {"integer"});
  c.need("stage", {"string", "null"});
  const json* run_id = c.need("run_id", {"string"});
  if (c.problem) return c.problem;
  if (!std::regex_match(version->get<std::string>(), std::regex("1\\.[0-9]+")))
    return fmt::format("schema_version '{}' is not 1.x, the major version this build reads", version->get<std::string>());
  if (*status != "passed" && *status != "failed")
    return fmt::format("'status' must be 'passed' or 'failed', not '{}'", status->get<std::string>());
  if (!std::regex_match(code->get<std::string>(), std::regex("[A-Z][A-Z0-9_]*")))
    return fmt::format("'code' '{}' is not a code name", code->get<std::string>());
  if (!std::regex_match(run_id->get<std::string>(), std::regex("[0-9a-f]{16}")))
    return "'run_id' is not 16 hexadecimal digits";
  const std::int64_t e = exit->get<std::int64_t>();  // not int: a huge number must not wrap into range
  if (e < 0 || e > 255) return fmt::format("'exit_code' {} is not an exit status (0-255)", e);
  if ((*status == "passed") != (e == 0))
    return fmt::format("'status' is '{}' but 'exit_code' is {}", status->get<std::string>(), e);
  // A code this build knows must carry its own number; a newer report's new code is taken as it says.
  if (const auto known = code_from_name(code->get<std::string>()); known && exit_code(*known) != e)
    return fmt::format("'exit_code' is {} but '{}' means {}", e, code->get<std::string>(), exit_code(*known));
  return std::nullopt;
}

std::optional<std::string> facts_problem(const json& r) {
  Checker top(r, "");
  const json* requested = top.need("requested", {"object"});
  const json* runtime = top.need("runtime", {"object"});
  const json* pytorch = top.need("pytorch", {"object"});
  top.need("device", {"object", "null"});
  const json* host = top.need("host", {"object", "null"});
  const json* layers = top.need("layers", {"array"});
  const json* error = top.need("error", {"object", "null"});
  if (top.problem) return top.problem;

  Checker req(*requested, "requested");
  req.need("device", {"string"});
  Checker rt(*runtime, "runtime");
  rt.need("suite_version", {"string", "null"});
  Checker pt(*pytorch, "pytorch");
  pt.need("loaded", {"boolean"});
  for (const char* key : {"version", "cuda_compiled", "hip_compiled"}) pt.need(key, {"string", "null"});
  for (const Checker* c : {&req, &rt, &pt})
    if (c->problem) return c->problem;
  if (error->is_object()) {
    Checker err(*error, "error");
    err.need("message", {"string"});
    if (err.problem) return err.problem;
  }
  if (host->is_object()) {
    Checker h(*host, "host");
    const json* gpus = h.need("gpus", {"array"});
    for (size_t i = 0; gpus && i < gpus->size() && !h.problem; ++i) {
      if (!(*gpus)[i].is_object()) return fmt::format("'host.gpus[{}]' must be an object", i);
      Checker g((*gpus)[i], fmt::format("host.gpus[{}]", i));
      g.need("driver_version", {"string"});
      if (g.problem) return g.problem;
    }
    if (h.problem) return h.problem;
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    if (!(*layers)[i].is_object()) return fmt::format("'layers[{}]' must be an object", i);
    Checker l((*layers)[i], fmt::format("layers[{}]", i));
    l.need("id", {"string"});
    l.need("status", {"string"});
    if (l.problem) return l.problem;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> report_problem(const json& report) {
  if (!report.is_object()) return fmt::format("a report is a JSON object, not {}", type_of(report));
  if (const auto kind = report.find("kind"); kind != report.end() && *kind == "kernodeck-aggregate")
    return "an aggregate, not a report (keep aggregates outside the reports' folder)";
  if (!report.contains("schema_version")) return "not a kernodeck report: 'schema_version' is missing";
  if (auto why = verdict_problem(report)) return why;
  return facts_problem(report);
}

}  // namespace kd
