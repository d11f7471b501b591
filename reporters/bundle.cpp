#include "bundle.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "contract/option_table.h"
#include "contract/report_parts.h"
#include "range_svg.h"
#include "report_file.h"

namespace kd {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

json last_successful_step(const json& report) {
  json last;
  using report::read;
  for (const auto& l : read(report, report::layers))
    for (const auto& t : read(l, report::layer_tests))
      if (read(t, report::test_status) == "passed")
        last = {{"layer", read(l, report::layer_id).value_or("")}, {"test", read(t, report::test_name).value_or("")}};
  return last;
}

}  // namespace

std::optional<std::string> check_new_folder(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) return fmt::format("--bundle: '{}' already exists; the bundle never replaces anything", path);
  if (auto why = check_new_file(p)) return "--bundle: " + *why;  // the parent folder exists and is writable
  return std::nullopt;
}

std::map<std::string, std::string> bundle_files(const json& report, const Options& o, const json& input_spec) {
  using report::read;
  const json& app = read(report, report::section_app);
  const json& memory = read(report, report::section_memory);
  json input = {{"spec", input_spec}, {"built_in", json::object()}};
  if (const json& w = read(report, report::app_embeddings); w.is_object())
    input["built_in"]["embeddings"] = read(w, report::app_embeddings_input).value_or("");
  if (const json& w = read(report, report::app_training); w.is_object())
    input["built_in"]["training"] = read(w, report::app_training_input).value_or("");
  std::map<std::string, std::string> files = {
      // The command as given, with every path replaced: the bundle travels, machine paths do not.
      {"command.json", dump({{"arguments", command_arguments(o)}})},
      {"versions.json", dump({{"runtime", read(report, report::section_runtime)}, {"pytorch", read(report, report::section_pytorch)},
                              {"schema_version", read(report, report::schema_version).value_or("")}})},
      {"parameters.json", dump(read(report, report::requested))},
      // A large spec stays compact: indenting a user's file may multiply its size (issue 17).
      {"input.json", input_spec.dump().size() > (64u << 10) ? input.dump(-1, ' ', false, json::error_handler_t::replace) + "\n" : dump(input)},
      {"steps.json", dump({{"last_successful_step", last_successful_step(report)},
                           {"stage", report::json_at(report, report::stage)}, {"first_error", read(report, report::error)}})},
      {"memory.json", dump({{"observations", memory},
                            {"note", memory.is_object() ? "from L5 (see README, Layer L5)" : "L5 did not run: no memory observations"}})},
      {"outputs.json", dump({{"app", app}, {"execution", read(report, report::section_execution)}})},
      {"report.json", dump(report)},
  };
  // L5's operating range, when it ran a point.
  if (const std::string svg = range_svg(report::read(report, report::memory_range)); !svg.empty()) files["operating_range.svg"] = svg;
  if (const std::string svg = sustained_svg(report::read(report, report::timing_sustained)); !svg.empty())
    files["sustained_load.svg"] = svg;
  return files;
}

std::optional<std::string> write_new_folder(const std::string& path, const std::map<std::string, std::string>& files) {
  if (auto why = check_new_folder(path)) return why;
  std::string clean = path;
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  const std::filesystem::path target(clean);
  const std::string parent = target.has_parent_path() ? target.parent_path().string() : ".";
  std::string tmp = fmt::format("{}/.{}.kd-XXXXXX", parent, target.filename().string());
  if (!::mkdtemp(tmp.data())) return fmt::format("--bundle: cannot create a folder beside '{}': {}", path, std::strerror(errno));
  std::error_code ec;
  auto fail = [&](const std::string& msg) -> std::optional<std::string> {
    std::filesystem::remove_all(tmp, ec);
    return msg;
  };
  ::chmod(tmp.c_str(), 0755);
  for (const auto& [name, content] : files) {
    std::ofstream f(tmp + "/" + name, std::ios::binary);
    f << content;
    if (!f.flush()) return fail(fmt::format("--bundle: cannot write {} into '{}'", name, path));
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, clean.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    return fail(err == EEXIST ? fmt::format("--bundle: '{}' appeared while the run was in progress; it was left untouched", path)
                              : fmt::format("--bundle: cannot create '{}': {}", path, std::strerror(err)));
  }
  return std::nullopt;
}

}  // namespace kd
