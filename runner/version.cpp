#include "version.h"

#include <fmt/format.h>

#include "fixtures/full_program.h"

namespace kd {

std::string version_text() {
  const std::string backend = KD_BUILT_BACKEND;
  const std::string kind = backend == "cuda" ? "CUDA build" : backend == "none" ? "CPU-only build" : "";
  const std::string torch = kind.empty() ? "none (built without the probe: a run reports TORCH_MISSING or why it could not be built)"
                                         : fmt::format("{} ({}, built through {})", KD_BUILT_TORCH, kind, KD_BUILT_PATH);
  const std::string revision = KD_SOURCE_REVISION;
  return fmt::format("kernodeck-diagnostic {}\nLibTorch: {}\nsource revision: {}\nbuild token: {}\n", KD_VERSION, torch,
                     revision.empty() ? "unknown (not built from a git checkout)" : revision, build_token());
}

std::string suite_version() { return KD_VERSION; }

}  // namespace kd
