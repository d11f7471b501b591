#include "version.h"

#include <fmt/format.h>

#include "fixtures/build_facts.h"

namespace kd {

std::string version_text() {
  const BuildFacts& built = build_facts();
  const std::string backend = built.backend;
  const std::string kind = backend == "cuda" ? "CUDA build" : backend == "none" ? "CPU-only build" : "";
  const std::string torch = kind.empty() ? "none (built without the probe: a run reports TORCH_MISSING or why it could not be built)"
                                         : fmt::format("{} ({}, built through {})", built.torch, kind, built.torch_path);
  const std::string revision = built.revision;
  return fmt::format("kernodeck-diagnostic {}\nLibTorch: {}\nsource revision: {}\nbuild token: {}\n", KD_VERSION, torch,
                     revision.empty() ? "unknown (not built from a git checkout)" : revision, built.token);
}

std::string suite_version() { return KD_VERSION; }

}  // namespace kd
