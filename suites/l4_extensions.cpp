#include "l4_extensions.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/report_parts.h"
#include "fixtures/extensions.h"
#include "fixtures/worker_context.h"

namespace kd {

using nlohmann::json;

Outcome load_extensions(WorkerContext& ctx) {
  if (ctx.options.extensions.empty()) return Outcome::not_applicable("no --extension given");
  json libraries = json::array();  // file names only: the report keeps no paths
  for (const std::string& given : ctx.options.extensions) {
    // A bare name would make dlopen search the library path: load the very file that was checked.
    const std::string path = given.find('/') == std::string::npos ? "./" + given : given;
    json entry = json::object();
    report::put(&entry, report::extension_library, ext::file_name(given));
    report::put(&entry, report::extension_loaded, false);
    report::put(&entry, report::extension_operators, {});
    auto fail = [&](const std::string& why) {
      libraries.push_back(entry);
      ctx.fact(report::app_extensions, libraries);
      return Outcome::fail(Code::ModelLoadFailed, why);
    };
    if (auto why = ext::file_problem(path)) return fail(*why);
    auto out = std::make_unique<kd_extension_out>();
    const kd_status s = ctx.probe->extension_load(path.c_str(), out.get());
    if (s.kind == KD_ERR_LIBRARY) return fail(ext::load_failure(path, s.message, out->cxx11_abi));
    if (s.kind != KD_OK) return fail(ext::registration_failure(path, s.message));
    if (out->operator_count == 0) return fail(ext::no_operators(path));
    std::vector<std::string> operators;
    for (int i = 0; i < std::min(out->operator_count, KD_EXTENSION_MAX_OPS); ++i) operators.emplace_back(out->operators[i]);
    report::put(&entry, report::extension_loaded, true);
    report::put(&entry, report::extension_operators, operators);
    report::put(&entry, report::extension_operator_count, out->operator_count);
    libraries.push_back(entry);
  }
  ctx.fact(report::app_extensions, libraries);
  return Outcome::pass();
}

}  // namespace kd
