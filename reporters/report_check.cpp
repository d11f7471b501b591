#include "report_check.h"

#include <algorithm>
#include <cstdint>
#include <regex>

#include <fmt/format.h>

#include "contract/report_parts.h"
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

// The checks of one object against the report's rows, collecting the first problem with its dotted path.
class Checker {
 public:
  Checker(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  // The row's field must be present, of the row's kind (or null where the row allows it).
  template <class T>
  const json* need(const report::Field<T>& row) {
    if (problem) return nullptr;
    const std::string pointer = row.info.pointer;
    const json* v = &j_;
    for (size_t start = 1; start <= pointer.size(); ) {
      size_t end = pointer.find('/', start);
      if (end == std::string::npos) end = pointer.size();
      const auto it = v->is_object() ? v->find(pointer.substr(start, end - start)) : v->end();
      if (!v->is_object() || it == v->end()) return fail(fmt::format("'{}' is missing", name(pointer)));
      v = &*it;
      start = end + 1;
    }
    if (report::fits(row.info, *v)) return v;
    return fail(fmt::format("'{}' must be {}{}, not {}", name(pointer), report::json_type(row.info.kind),
                            row.info.nullable ? " or null" : "", type_of(*v)));
  }

  std::optional<std::string> problem;

 private:
  std::string name(std::string pointer) const {  // "/pytorch/version" -> "pytorch.version"
    std::replace(pointer.begin(), pointer.end(), '/', '.');
    return path_ + (path_.empty() ? pointer.substr(1) : pointer);
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
  const json* version = c.need(report::schema_version);
  const json* status = c.need(report::status);
  const json* code = c.need(report::code);
  const json* exit = c.need(report::exit_code);
  c.need(report::stage);
  const json* run_id = c.need(report::run_id);
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

// What the aggregate reads of a report: the sections it names, then the fields it shows.
std::optional<std::string> facts_problem(const json& r) {
  Checker top(r, "");
  const json* requested = top.need(report::requested);
  top.need(report::section_runtime);
  top.need(report::section_pytorch);
  top.need(report::device);
  const json* host = top.need(report::host);
  const json* layers = top.need(report::layers);
  const json* error = top.need(report::error);
  if (top.problem) return top.problem;
  Checker req(*requested, "requested");
  if (!req.need(report::requested_device)) return req.problem;
  top.need(report::runtime_suite_version);
  top.need(report::pytorch_loaded);
  top.need(report::pytorch_version);
  top.need(report::pytorch_cuda_compiled);
  top.need(report::pytorch_hip_compiled);
  if (top.problem) return top.problem;
  if (error->is_object()) {
    top.need(report::error_message);
    if (top.problem) return top.problem;
  }
  // nvidia-smi's part (--host-check): a host without it (since 1.9 every report has a host) has nothing of it to check.
  if (host->is_object() && (report::read(*host, report::host_tool) || !report::read(*host, report::host_gpus).is_null())) {
    Checker h(*host, "host");
    const json* gpus = h.need(report::host_gpus);
    for (size_t i = 0; gpus && i < gpus->size() && !h.problem; ++i) {
      if (!(*gpus)[i].is_object()) return fmt::format("'host.gpus[{}]' must be an object", i);
      Checker g((*gpus)[i], fmt::format("host.gpus[{}]", i));
      g.need(report::host_gpu_driver_version);
      if (g.problem) return g.problem;
    }
    if (h.problem) return h.problem;
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    if (!(*layers)[i].is_object()) return fmt::format("'layers[{}]' must be an object", i);
    Checker l((*layers)[i], fmt::format("layers[{}]", i));
    l.need(report::layer_id);
    l.need(report::layer_status);
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
