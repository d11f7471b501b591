#include "worker.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "fixtures/layer_test.h"
#include "fixtures/target_gpu.h"
#include "fixtures/worker_context.h"
#include "fixtures/listener.h"
#include "fixtures/nvml_sharing.h"
#include "machine/kernel_log.h"
#include "suites/layers.h"

namespace kd {

int run_worker(const Options& options, const Role& role, const char* argv0, events::Sink sink) {
  events::set_sink(std::move(sink));
  events::set_run_id(role.run_id);
  worker_context().options = options;
  worker_context().role = role;
  events::marker("read_parameters", "");  // main() parsed them; this process now knows what to run
  if (!options.cpu_mode()) {  // L2's health facts, read while L1 loads LibTorch
    start_nvml_query();
    machine::start_kernel_log_read(options.kernel_log_file);
  }
  // The measuring layers' watch over other processes on the GPU (fixtures/gpu_watch.h): its child starts now too, so
  // that its nvmlInit is done before their first measurement. A plain run (L1-L3) starts nothing.
  const auto measuring = [&](const std::string& id) { return id == "L5" || id == "L6" || id == "L7" || id == "L8"; };
  if (!options.cpu_mode() && std::any_of(options.layers.begin(), options.layers.end(), measuring)) start_nvml_watch();

  std::vector<std::string> args = {argv0};
  if (!options.has_gtest_flag("filter")) args.push_back("--gtest_filter=" + filter_for_layers(layers(), options.layers));
  args.insert(args.end(), options.gtest_args.begin(), options.gtest_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  testing::InitGoogleTest(&argc, argv.data());
  // The order is the contract: whatever GTEST_* variables or a flag file said, the tests run once, in
  // registry order, and a failure is a result, not a debugger trap. The command line refuses these flags
  // (contract/option_table.cpp); the supervisor records which variables it found (requested.gtest_environment_ignored).
  testing::GTEST_FLAG(shuffle) = false;
  testing::GTEST_FLAG(repeat) = 1;
  testing::GTEST_FLAG(random_seed) = 0;
  testing::GTEST_FLAG(break_on_failure) = false;
  testing::GTEST_FLAG(throw_on_failure) = false;
  testing::GTEST_FLAG(catch_exceptions) = true;
  testing::GTEST_FLAG(also_run_disabled_tests) = false;
  testing::GTEST_FLAG(stream_result_to) = "";
  if (!options.has_gtest_flag("output")) testing::GTEST_FLAG(output) = "";  // GTEST_OUTPUT would overwrite files

  register_layer_tests(layers());
  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  // By default the supervisor shows one line per layer; GoogleTest's own lines (and its source paths) with -v.
  if (!options.verbose && !options.has_gtest_flag("list_tests")) delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new VerdictListener(events::emit, options.fault));
  const int rc = RUN_ALL_TESTS() == 0 ? 0 : 1;
  // NVML's facts for the report (host.nvml) and for the signatures of a GPU that failed (its compute mode, MIG, the
  // NVSwitch fabric): L2's health test waited for them already; after a failure past L1 they are waited for here
  // (at most the query's 3 s), and otherwise taken only if in.
  if (auto nvml = nvml_query_result(rc != 0 && worker_context().probe != nullptr)) worker_context().fact(report::host_nvml, *nvml);
  // The kernel's Xid evidence (host.kernel_log): bounded by its own limits, so always waited for once started.
  if (auto kernel_log = machine::kernel_log_result()) worker_context().fact(report::host_kernel_log, *kernel_log);
  return rc;
}

}  // namespace kd
