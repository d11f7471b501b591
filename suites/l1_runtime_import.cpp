// L1 runtime & import: which runtime runs, and LibTorch actually loads.
#include <gnu/libc-version.h>
#include <sys/utsname.h>

#include <fstream>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "fixtures/probe_loader.h"
#include "fixtures/suite_build.h"
#include "contract/events.h"
#include "process/run_process.h"
#include "fixtures/full_program.h"

#ifndef KD_VERSION
#define KD_VERSION "unknown"
#endif

namespace kd {
namespace {

std::string os_name() {  // PRETTY_NAME from os-release: a distribution name, nothing about the machine
  std::ifstream f("/etc/os-release");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  return "";
}

std::string compiler() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

// Run by the user's interpreter: one JSON line, whatever happens. A missing dependency of torch
// is an import failure (4), only torch itself missing is TORCH_MISSING (3).
constexpr const char* kPythonProbe = R"(
import json, sys
out = {"python": sys.version.split()[0]}
try:
    import torch
except ModuleNotFoundError as e:
    out["import"] = "missing" if e.name == "torch" else "failed"
    out["message"] = f"{type(e).__name__}: {e}"
except BaseException as e:
    out["import"] = "failed"
    out["message"] = f"{type(e).__name__}: {e}"
else:
    out.update({"import": "ok", "torch": torch.__version__, "cuda": torch.version.cuda,
                "hip": getattr(torch.version, "hip", None)})
print(json.dumps(out))
)";

std::string public_version(const std::string& v) { return v.substr(0, v.find('+')); }  // "2.11.0+cu130"

}  // namespace


Outcome l1_runtime_facts(WorkerContext& ctx) {
  utsname u{};
  if (::uname(&u) != 0) return Outcome::fail(Code::RuntimeError, "uname() failed: the runtime cannot be identified");
  ctx.fact(report::runtime_os_family, u.sysname[0] == 'L' ? "linux" : u.sysname);
  const std::string os = os_name();
  ctx.fact(report::runtime_os_name, report::unless_empty(os));
  ctx.fact(report::runtime_arch, u.machine);
  ctx.fact(report::runtime_libc, fmt::format("glibc {}", gnu_get_libc_version()));
  ctx.fact(report::runtime_compiler, compiler());
  ctx.fact(report::runtime_suite_version, KD_VERSION);
  return Outcome::pass();
}

// Needs the runtime facts: every report then says what it ran on, a run of one later layer too.
Outcome l1_libtorch_loads(WorkerContext& ctx) {
  const ProbeLoad load = load_probe(default_probe_path());
  if (!load.probe) {
    ctx.fact(report::pytorch_loaded, false);
    return Outcome::fail(load.code, load.message);
  }
  kd_torch_info info{};
  const kd_status s = load.probe->torch_info(&info);
  if (s.kind != KD_OK)
    return Outcome::fail(Code::TorchImportFailed, fmt::format("LibTorch loaded but did not answer: {}", s.message));
  ctx.probe = load.probe;
  events::marker("load_library", "L1.import");
  ctx.fact(report::pytorch_loaded, true);
  ctx.fact(report::pytorch_version, report::unless_empty(info.version));
  ctx.fact(report::pytorch_cuda_compiled, report::unless_empty(info.cuda_compiled));
  ctx.fact(report::pytorch_hip_compiled, report::unless_empty(info.hip_compiled));
  ctx.fact(report::pytorch_backend, info.backend);
  ctx.fact(report::pytorch_source, info.source);
  // The suite's own parts for the layers this run selects: kernodeck-diagnostic-full holds L4-L8's steps (this
  // program hands it such runs, fixtures/full_program.h), libkd_probe_heavy.so their LibTorch code. One that is not
  // built, or is of another build, is this step's failure: the suite cannot run what was asked (never a verdict on
  // the machine's LibTorch, and never a later layer's runtime error).
  if (const std::vector<std::string> missing = selected_layers_not_here(); !missing.empty()) {
    const std::string why = full_program_problem();
    return Outcome::fail(Code::SuiteIncomplete,
                         fmt::format("layers {} are selected and this program does not hold them: {}", fmt::join(missing, ", "),
                                     why.empty() ? std::string(kFullProgram) + " holds them" : why));
  }
  for (const char* id : {"L4", "L5", "L6", "L7", "L8"}) {
    if (!layer_will_run(id)) continue;
    const kd_status heavy = load.probe->heavy_part();
    if (heavy.kind == KD_ERR_INCOMPLETE)  // the suite's gap: nothing is wrong with this LibTorch
      return Outcome::fail(Code::SuiteIncomplete, suite::incomplete(heavy.message, "kd_probe_heavy"));
    if (heavy.kind != KD_OK) return Outcome::fail(classify_load_error(heavy.message), heavy.message);
    break;
  }
  return Outcome::pass();
}

}  // namespace kd

namespace kd {

Outcome l1_python_torch(WorkerContext& ctx) {
  if (!ctx.options.python) return Outcome::not_applicable("no --python interpreter given");
  const std::string exe = find_executable(*ctx.options.python);
  // Same process group as the worker: the supervisor's timeout ends the interpreter too.
  const ProcessResult r = run_process({exe, "-c", kPythonProbe}, ctx.options.timeout_s, false, false);
  if (exe.empty() || !r.started) return Outcome::fail(Code::TorchMissing, "the --python interpreter could not be started");
  const std::string last = r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1);
  const auto out = nlohmann::json::parse(last, nullptr, false);
  if (out.is_discarded() || !out.is_object())
    return Outcome::fail(Code::TorchImportFailed, fmt::format("the --python interpreter gave no answer (exit {})", r.exit_status));
  const std::string import = out.value("import", "failed");
  // The interpreter's own answer: a string where it gave one, else null.
  auto text = [&](const char* k) {
    return out.contains(k) && out[k].is_string() ? std::optional(out[k].get<std::string>()) : std::nullopt;
  };
  nlohmann::json python = nlohmann::json::object();
  report::put(&python, report::python_version, text("python"));
  report::put(&python, report::python_import, import);
  report::put(&python, report::python_torch_version, text("torch"));
  report::put(&python, report::python_cuda, text("cuda"));
  report::put(&python, report::python_hip, text("hip"));
  ctx.fact(report::python, python);
  if (import == "missing") return Outcome::fail(Code::TorchMissing, "python: " + out.value("message", "no torch"));
  if (import != "ok") return Outcome::fail(Code::TorchImportFailed, "python: " + out.value("message", "import failed"));
  // A different torch in the project's Python than in the suite is worth knowing, not a failure.
  if (ctx.probe) {
    kd_torch_info info{};
    ctx.probe->torch_info(&info);
    const std::string py_torch = text("torch").value_or(""), py_cuda = text("cuda").value_or("");
    if (public_version(py_torch) != info.version || py_cuda != info.cuda_compiled)
      events::warning(fmt::format("the --python interpreter has torch {} (CUDA {}), the suite loaded LibTorch {} (CUDA {})",
                                  py_torch, py_cuda.empty() ? "none" : py_cuda, info.version,
                                  *info.cuda_compiled ? info.cuda_compiled : "none"));
  }
  return Outcome::pass();
}

}  // namespace kd
