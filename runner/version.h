// --version: what this build is, without loading LibTorch (the supervisor never does).
#pragma once
#include <string>

namespace kd {

// The suite's version, the LibTorch the probe was built against (version, CUDA or CPU-only
// build, or none), the source revision the build was configured from, when it was a git checkout, and the build's
// token (fixtures/full_program.h: the two programs of one build share it).
std::string version_text();
std::string suite_version();  // e.g. "0.1.0"

}  // namespace kd
