// The supervisor: never loads LibTorch or CUDA. It starts the worker (this executable
// again), reads its events, enforces the timeout, notices a death, and alone writes the
// report and chooses the exit code.
#pragma once
#include <string>

#include "contract/options.h"

namespace kd {

int supervise(const Options& options, const std::string& self_exe);

std::string self_executable();

}  // namespace kd
