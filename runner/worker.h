// The worker: runs the layer suites under GoogleTest with the verdict listener and
// sends events to the supervisor. It is the only process that loads LibTorch.
#pragma once
#include "contract/events.h"
#include "contract/options.h"
#include "contract/run_plan.h"

namespace kd {

// Runs the selected tests; events go to sink (none: events are dropped, e.g. for --gtest_list_tests).
int run_worker(const Options& options, const Role& role, const char* argv0, events::Sink sink);

}  // namespace kd
