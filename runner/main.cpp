// kernodeck-diagnostic: one entry point for users, ctest and --gtest_filter alike.
// Without --kd-plan this process supervises. With it, the run plan's file says what this process is:
// the worker (its event fd), L4's batch job, one shard of L4 across devices, L5's range job, or the CPU
// re-run of a model; with --kd-nvml-facts, the NVML child; `aggregate` reads many machines' reports. Every one
// loads the heavy part first (L4 to L8, `aggregate`: runner/heavy_part.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "contract/events.h"
#include "contract/run_plan.h"
#include "fixtures/layer_test.h"
#include "fixtures/nvml_facts.h"
#include "fixtures/worker_context.h"
#include "runner/heavy_part.h"
#include "runner/supervisor.h"
#include "runner/version.h"
#include "runner/worker.h"
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
// TEST ONLY --inject-fault slow-exit: the worker stays 3 s before it ends, as a slow teardown would.
[[noreturn]] void end_worker(const kd::Options& options, int rc) {
  if (!kSanitized) {
    std::fflush(nullptr);
    const std::string& mode = kd::worker_context().compute_mode;
    kd::events::emit(kd::events::Exit{rc, mode.empty() ? std::nullopt : std::optional<std::string>(mode)});
  }
  if (options.fault == "slow-exit") std::this_thread::sleep_for(std::chrono::seconds(3));
  end_after_job(rc);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  kd::heavy::load();  // before anything reads the layers
  const kd::heavy::Part* heavy = kd::heavy::part();
  if (!args.empty() && args[0] == "aggregate") {
    if (heavy) return heavy->aggregate_command({args.begin() + 1, args.end()});
    std::fprintf(stderr, "kernodeck-diagnostic: usage error: aggregate: %s\n", kd::heavy::absent_reason().c_str());
    return kd::exit_code(kd::Code::UsageError);
  }
  const kd::ParseResult parsed = kd::parse_command_line(args, kd::known_layer_ids());
  if (std::holds_alternative<kd::HelpRequested>(parsed)) {
    std::fputs(kd::usage_text().c_str(), stdout);
    return 0;
  }
  if (const auto* err = std::get_if<kd::UsageError>(&parsed)) {
    std::fprintf(stderr, "kernodeck-diagnostic: usage error: %s\nRun 'kernodeck-diagnostic --help' for the options.\n",
                 err->message.c_str());
    return kd::exit_code(kd::Code::UsageError);
  }
  kd::Options options = std::get<kd::Options>(parsed);
  if (options.plan) {  // started by this tool: the plan replaces the command line
    auto planned = kd::read_plan(*options.plan);
    if (const auto* why = std::get_if<std::string>(&planned)) {
      std::fprintf(stderr, "kernodeck-diagnostic: usage error: --kd-plan is internal (this tool starts its own "
                   "processes with it): %s\n", why->c_str());
      return kd::exit_code(kd::Code::UsageError);
    }
    options = std::get<kd::Options>(std::move(planned));
  }
  if (options.version) {
    std::fputs(kd::version_text().c_str(), stdout);
    return 0;
  }
  if (options.nvml_facts) return kd::print_nvml_facts();  // started by the host check and L2's health test
  // The heavy part's jobs, started by its own steps (so it is there; a part removed meanwhile is a failed worker).
  if (options.batch_job || options.cpu_rerun || options.range_job_share || options.shard_job) {
    if (!heavy) {
      std::fprintf(stderr, "kernodeck-diagnostic: %s\n", kd::heavy::absent_reason().c_str());
      return kd::exit_code(kd::Code::WorkerFailed);
    }
    if (options.batch_job) end_after_job(heavy->batch_job(options));  // started by L4's stop/resume step
    if (options.cpu_rerun) end_after_job(heavy->model_rerun(options));  // started by L4.model_run after a device-side assert
    if (options.range_job_share) end_after_job(heavy->range_job(options));  // started by L5's processes axis
    end_after_job(heavy->shard_job(options));  // started by L4 across devices
  }
  if (options.worker_fd >= 0) end_worker(options, kd::run_worker(options, argv[0], kd::events::fd_sink(options.worker_fd)));
  if (options.has_gtest_flag("list_tests")) return kd::run_worker(options, argv[0], nullptr);  // lists, runs nothing
  return kd::supervise(options, kd::self_executable());
}
