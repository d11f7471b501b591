#include "runner/program.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "contract/options.h"
#include "contract/events.h"
#include "contract/run_plan.h"
#include "fixtures/full_program.h"
#include "fixtures/nvml_facts.h"
#include "fixtures/nvml_sharing.h"
#include "fixtures/worker_context.h"
#include "runner/supervisor.h"
#include "runner/version.h"
#include "runner/worker.h"
#include "suites/layers.h"
#include "verdict/codes.h"

namespace {

// A process that loaded LibTorch ends here once its job returned: its events went straight to the pipe and its
// files were closed, so LibTorch's and the CUDA runtime's static teardown, which a normal exit runs, would check
// nothing and only delay the verdict (docs/BENCHMARKS.md, 2026-12-02 night). Sanitizer builds end normally, so
// that the checks they make at exit still run.
// GCC names a sanitizer build by macros, clang (the CI's sanitizer build) by __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__SANITIZE_UNDEFINED__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
constexpr bool kSanitized = __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
constexpr bool kSanitized = false;
#endif

[[noreturn]] void end_after_job(int rc) {
  std::fflush(nullptr);
  if (kSanitized) std::exit(rc);
  ::_exit(rc);
}

// The worker says so before it ends (events::Exit): the supervisor then gives the verdict without waiting for
// the kernel to unmap the worker's memory and release its GPU context (about 0.1 s on an H200,
// docs/BENCHMARKS.md). A sanitizer build's worker says nothing: its checks at exit are waited for.
// TEST ONLY --inject-fault slow-exit: the worker stays 4.5 s before it ends, as a slow teardown would: within the
// supervisor's 5 s grace after the verdict, and longer than a CPU run takes on a loaded 2-core machine (3.1 s seen).
[[noreturn]] void end_worker(const kd::Options& options, int rc) {
  if (!kSanitized) {
    std::fflush(nullptr);
    const std::string& mode = kd::worker_context().compute_mode;
    kd::events::emit(kd::events::Exit{rc, mode.empty() ? std::nullopt : std::optional<std::string>(mode)});
  }
  if (options.fault == "slow-exit") std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  end_after_job(rc);
}

// Whether a run of these options may need a layer this program does not hold: one named by --layers (or --full),
// or any test a filter may select; the plain run and --layers L1-L3 never do.
bool may_need_more(const kd::Options& options) {
  if (options.has_gtest_flag("filter")) return true;
  for (const kd::LayerDef& l : kd::layers())
    for (const kd::StepDef& s : l.steps)
      if (!s.fn && std::find(options.layers.begin(), options.layers.end(), l.id) != options.layers.end()) return true;
  return false;
}

// A planned process: the worker, or a job that a step of L4 or L5 started (those are kernodeck-diagnostic-full's).
int run_planned(const kd::Plan& plan, const char* argv0) {
  const kd::HeldCommands& held = kd::held_commands();
  int (*job)(const kd::Plan&) = nullptr;
  switch (plan.role.kind) {
    case kd::ProcessRole::Worker:
      end_worker(plan.options, kd::run_worker(plan.options, plan.role, argv0, kd::events::fd_sink(plan.role.event_fd)));
    case kd::ProcessRole::BatchJob: job = held.batch_job; break;
    case kd::ProcessRole::ShardJob: job = held.shard_job; break;
    case kd::ProcessRole::RangeJob: job = held.range_job; break;
    case kd::ProcessRole::ModelRerun: job = held.model_rerun; break;
    default: break;
  }
  if (job) end_after_job(job(plan));
  std::fprintf(stderr, "kernodeck-diagnostic: this program runs no job of L4 to L8: %s does\n", kd::kFullProgram);
  return kd::exit_code(kd::Code::SuiteIncomplete);
}

int aggregate_or_hand_over(char** argv, const std::vector<std::string>& args) {
  if (const auto run = kd::held_commands().aggregate) return run(args);
  kd::hand_over_to_full_program(argv);  // returns only when it cannot
  std::fprintf(stderr, "kernodeck-diagnostic: SUITE_INCOMPLETE (exit 19): aggregate: %s\n",
               kd::full_program_problem().c_str());
  return kd::exit_code(kd::Code::SuiteIncomplete);
}

}  // namespace

int kd::run_program(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "aggregate") return aggregate_or_hand_over(argv, {args.begin() + 1, args.end()});
  const kd::ParseResult parsed = kd::parse_command_line(args, kd::layer_ids(kd::layers()));
  if (std::holds_alternative<kd::HelpRequested>(parsed)) {
    std::fputs(kd::usage_text().c_str(), stdout);
    return 0;
  }
  if (const auto* err = std::get_if<kd::UsageError>(&parsed)) {
    std::fprintf(stderr, "kernodeck-diagnostic: usage error: %s\nRun 'kernodeck-diagnostic --help' for the options.\n",
                 err->message.c_str());
    return kd::exit_code(kd::Code::UsageError);
  }
  const kd::Options& options = std::get<kd::Options>(parsed);
  if (options.version) {
    std::fputs(kd::version_text().c_str(), stdout);
    return 0;
  }
  switch (options.flag_role) {  // the NVML child's roles, chosen by their flags (contract/process_role.h)
    case kd::ProcessRole::NvmlFacts: return kd::print_nvml_facts(options.nvml_processes);  // the host check, L2's health test
    case kd::ProcessRole::NvmlWatch: return kd::serve_nvml_watch();  // the measuring layers (fixtures/gpu_watch.h)
    default: break;  // the supervisor, or a planned role (--kd-plan, below)
  }
  if (options.list_stages) {  // asked by CTest's conformance tests (ctest/conformance_tests.cmake)
    for (const kd::LayerDef& l : kd::layers())
      for (const kd::StepDef& s : l.steps) std::printf("%s\n", s.stage.c_str());
    return 0;
  }
  if (options.plan) {  // started by this tool: its plan says what this process is
    const auto plan = kd::read_plan(*options.plan);
    if (const auto* why = std::get_if<std::string>(&plan)) {
      std::fprintf(stderr, "kernodeck-diagnostic: usage error: --kd-plan is internal (this tool starts its own "
                   "processes with it): %s\n", why->c_str());
      return kd::exit_code(kd::Code::UsageError);
    }
    return run_planned(std::get<kd::Plan>(plan), argv[0]);
  }
  if (options.has_gtest_flag("list_tests")) return kd::run_worker(options, {}, argv[0], nullptr);  // lists, runs nothing
  if (!kd::holds_every_layer() && may_need_more(options)) kd::hand_over_to_full_program(argv);  // returns if it cannot
  return kd::supervise(options, kd::self_executable());
}
