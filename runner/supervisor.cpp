#include "supervisor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "all_devices.h"
#include "contract/events.h"
#include "contract/report_fields.h"
#include "contract/run_plan.h"
#include "host_check.h"
#include "machine/environment.h"
#include "machine/host_facts.h"
#include "machine/read_text.h"
#include "run_scratch.h"
#include "fixtures/app_contract_io.h"
#include "fixtures/layer_test.h"
#include "suites/layers.h"
#include "verdict/floors.h"
#include "process/run_process.h"
#include "process/spawn.h"
#include "process/wait.h"
#include "reporters/bundle.h"
#include "reporters/live_layers.h"
#include "reporters/markdown_summary.h"
#include "reporters/metrics.h"
#include "reporters/report_builder.h"
#include "reporters/report_file.h"
#include "reporters/terminal_reporter.h"
#include "version.h"
#include "worker.h"

namespace kd {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int sig) { g_stop_signal = sig; }

std::string random_run_id() {
  unsigned char bytes[8] = {};
  std::ifstream("/dev/urandom", std::ios::binary).read(reinterpret_cast<char*>(bytes), sizeof bytes);
  std::string id;
  for (unsigned char b : bytes) id += fmt::format("{:02x}", b);
  return id;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// GTEST_* variables (GTEST_SHUFFLE, GTEST_REPEAT, ...) would change the order or the number of the tests
// behind a verdict: the worker overrides them, and the report names them (names only, never values).
std::vector<std::string> gtest_environment_names() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    if (entry.rfind("GTEST_", 0) == 0) names.push_back(entry.substr(0, entry.find('=')));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<LayerInfo> layer_infos() {
  std::vector<LayerInfo> v;
  for (const auto& l : layers()) v.push_back({l.id, l.suite, l.title});
  return v;
}

// Reaps the worker, waiting at most `limit`; a process stuck in the driver may never go.
bool reap(pid_t pid, Clock::duration limit, WorkerEnd* w) {
  const std::optional<int> status = reap_until(pid, Clock::now() + limit);
  if (!status) return false;
  const Ending end = decode_wait_status(*status);
  w->exited = end.exited;
  if (end.exited) w->exit_status = end.exit_status;
  w->signal = end.signal;
  return true;
}

// Runs the worker as a child process; fills events and how it ended. live (may be null) sees each event as it comes.
// The worker reads its options from the run plan at plan_path (contract/run_plan.h), written here.
void run_child(const Options& o, Role role, const std::string& exe, const std::string& plan_path, RunRecord* run,
               LiveLayers* live) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    run->worker.exited = true;
    run->worker.exit_status = 127;
    return;
  }
  role.event_fd = fds[1];
  if (write_plan({role, o}, plan_path)) {
    ::close(fds[0]);
    ::close(fds[1]);
    run->worker.exited = true;
    run->worker.exit_status = 127;
    return;
  }
  SpawnSpec spec;
  spec.argv = {exe, "--kd-plan=" + plan_path};
  spec.own_group = true;  // the timeout kills the group: anything the worker started goes too
  // A supervisor killed with SIGKILL takes its worker along: none runs on in a scratch folder that the
  // next run removes as stale (runner/run_scratch.h).
  spec.die_with_parent = true;
  spec.keep_fds = {fds[1]};  // the event pipe survives exec
  if (o.report_to_stdout()) spec.out = Redirect::to_fd(STDERR_FILENO);  // stdout is the JSON report's alone

  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.run_limit_s()));
  const pid_t pid = spawn(spec).pid;
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    run->worker.exited = true;
    run->worker.exit_status = 127;
    return;
  }

  events::LineCollector lines;
  bool eof = false, verdict_in = false, exit_told = false;
  bool wait_release = o.wait_for_gpu_release;  // or the worker's GPU is not in the default compute mode
  char buf[8192];
  while (!eof && !exit_told) {
    if (g_stop_signal) {
      run->worker.interrupted = true;
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
    if (ready <= 0) continue;  // timeout slice or EINTR: check the clock and signals again
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      const size_t seen = lines.events().size();
      lines.feed(std::string_view(buf, static_cast<size_t>(n)));
      for (size_t e = seen; e < lines.events().size(); ++e) {
        const events::Event& ev = lines.events()[e];
        verdict_in = verdict_in || std::holds_alternative<events::End>(ev);
        // After its verdict the worker says it ends: what is left is the kernel's teardown of its memory and
        // GPU context, not waited for (contract/event_types.h). Should it linger, die_with_parent ends it. A GPU
        // in another compute mode than default (or --wait-for-gpu-release) is waited for: the job started next would
        // find it still taken.
        if (const auto* x = std::get_if<events::Exit>(&ev); x && verdict_in) {
          run->worker.exited = true;
          run->worker.exit_status = static_cast<int>(x->status);
          exit_told = true;
          wait_release = wait_release || (x->compute_mode && *x->compute_mode != "default");
        }
        if (live) live->on_event(ev);
      }
      if (lines.overflowed()) {
        run->worker.flooded = true;
        break;
      }
      // Once the verdict is in, a worker stuck in its teardown gets a short grace, not the whole limit.
      if (!lines.events().empty() && std::holds_alternative<events::End>(lines.events().back()))
        deadline = std::min(deadline, Clock::now() + std::chrono::seconds(5));
    }
    else if (n == 0 || errno != EINTR)
      eof = true;
  }
  ::close(fds[0]);
  lines.finish();
  if (live) live->finish();
  run->events = lines.events();
  run->events.erase(std::remove_if(run->events.begin(), run->events.end(),
                                   [](const events::Event& e) { return std::holds_alternative<events::Exit>(e); }),
                    run->events.end());
  run->malformed_events = lines.malformed();
  if (exit_told && wait_release) {  // until the worker is gone: its descriptors closed, its GPU context released
    const WorkerEnd told = run->worker;
    if (!reap(pid, std::max(deadline - Clock::now(), Clock::duration::zero()), &run->worker)) {
      kill_group(pid);  // stuck in its teardown past the grace: ended as a timeout would end it
      reap(pid, std::chrono::seconds(1), &run->worker);
    }
    run->worker = told;  // the worker's own word on how it ended: the wait only frees the GPU
    return;
  }
  if (exit_told) return;

  const bool has_verdict = !run->events.empty() && std::holds_alternative<events::End>(run->events.back());
  if (eof) {
    const auto left = std::max(deadline - Clock::now(), Clock::duration::zero());
    if (reap(pid, left, &run->worker)) return;
  }
  run->worker.timed_out = !run->worker.interrupted && !run->worker.flooded && !has_verdict;
  kill_group(pid);
  reap(pid, std::chrono::seconds(1), &run->worker);
}

// --in-process: the worker runs on a thread of this process, so that a stop signal still ends the run at
// once with a verdict. A test that does not return cannot be stopped, only left: returns false then, and
// the caller must end the process without returning into a runtime that the thread still uses.
bool run_in_process(const Options& o, const Role& role, const std::string& exe, RunRecord* run) {
  struct Shared {
    std::mutex m;
    std::vector<std::string> lines;
    bool done = false;
    int rc = 0;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, o, role, exe] {
    const int rc = run_worker(o, role, exe.c_str(), [shared](const std::string& l) {
      std::lock_guard<std::mutex> g(shared->m);
      shared->lines.push_back(l);
    });
    std::lock_guard<std::mutex> g(shared->m);
    shared->done = true;
    shared->rc = rc;
  }).detach();
  std::unique_lock<std::mutex> lock(shared->m);
  while (!shared->done && !g_stop_signal) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lock.lock();
  }
  events::LineCollector c;
  for (const auto& l : shared->lines) c.feed(l);
  c.finish();
  run->events = c.events();
  if (!shared->done) {
    run->worker.interrupted = true;
    return false;
  }
  run->worker.exited = true;
  run->worker.exit_status = shared->rc;
  return true;
}

// What save_files wrote, so that undoing it removes exactly that and nothing it did not create.
struct SavedFiles {
  std::optional<std::string> bundle, summary, metrics, report;  // the paths written
  std::vector<std::string> removed;  // what was removed again, since a later file could not be saved

  void undo() {
    std::error_code ec;
    for (const auto& [file, name] : {std::pair{&summary, "summary"}, std::pair{&metrics, "metrics"}})
      if (*file) {
        ::unlink((*file)->c_str());
        removed.push_back(name);
      }
    if (bundle) {
      std::filesystem::remove_all(*bundle, ec);
      removed.push_back("bundle");
    }
    bundle.reset();
    summary.reset();
    metrics.reset();
  }
  // The lines for the terminal (paths there only, never in the files).
  std::string terminal_text() const {
    std::string text;
    if (!removed.empty()) {  // "Not kept, since the report could not be saved: the summary and the bundle"
      std::string names = "the " + removed.front();
      for (size_t i = 1; i < removed.size(); ++i) names += (i + 1 == removed.size() ? " and the " : ", the ") + removed[i];
      text = "Not kept, since the report could not be saved: " + names + "\n";
    }
    if (bundle) text += fmt::format("Bundle: {}\n", *bundle);
    if (summary) text += fmt::format("Summary: {}\n", *summary);
    if (metrics) text += fmt::format("Metrics: {}\n", *metrics);
    if (report) text += fmt::format("Report: {}\n", *report);  // the terminal may show the path; the report never does
    return text;
  }
};

// The bundle and the summary first, then the JSON report, so that the report (whose exit code is the
// process's) also records a summary that could not be written. Each file exists only if it agrees with
// the exit code: when a later one cannot be written (exit 12), the earlier ones are removed again.
SavedFiles save_files(const Options& o, nlohmann::json* report, const nlohmann::json& spec) {
  SavedFiles saved;
  if (o.bundle) {
    if (auto why = write_new_folder(*o.bundle, bundle_files(*report, o, spec)))
      set_verdict(report, Code::OutputWriteFailed, "bundle", *why);
    else
      saved.bundle = *o.bundle;
  }
  // TEST ONLY (--inject-fault slow-save): a window between two files for a signal to arrive in.
  if (o.fault == "slow-save") std::this_thread::sleep_for(std::chrono::seconds(3));
  // A new file of the run's: saved, or the verdict becomes 12 and what was saved before is removed again.
  const auto save_new = [&](const std::optional<std::string>& path, const char* stage, auto render,
                            std::optional<std::string>* saved_as) {
    if (!path) return;
    if (auto why = write_new_file(*path, render())) {
      set_verdict(report, Code::OutputWriteFailed, stage, *why);
      saved.undo();
    } else {
      *saved_as = *path;
    }
  };
  save_new(o.summary_md, "summary", [&] { return render_markdown_summary(*report); }, &saved.summary);
  save_new(o.metrics, "metrics", [&] { return render_metrics(*report); }, &saved.metrics);
  if (o.output && !o.report_to_stdout()) {  // --output -: printed after the terminal text (supervise)
    if (auto why = write_new_file(*o.output, report->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
      struct stat st {};
      if (::lstat(o.output->c_str(), &st) == 0) *why += " (it appeared while the run was in progress)";  // absent at the start
      set_verdict(report, Code::OutputWriteFailed, "report", *why);
      saved.undo();
    } else {
      saved.report = *o.output;
    }
  }
  return saved;
}

// --floors FILE's table (verdict/floors.h), or why it cannot be one: unreadable, too large, or not its form.
std::variant<nlohmann::json, std::string> read_floors(const std::string& path) {
  const std::optional<std::string> text = machine::read_text(path, floors::kMaxFileBytes + 1);
  if (!text) return fmt::format("cannot be read: {}", std::strerror(errno));
  return floors::parse(*text);
}

}  // namespace

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

int supervise(const Options& o, const std::string& exe) {
  std::vector<std::pair<std::string, std::string>> outputs;  // distinct before anything runs
  for (const auto& [name, path] : {std::pair{"--output", o.output}, {"--summary-md", o.summary_md}, {"--metrics", o.metrics},
                                   {"--bundle", o.bundle}, {"--gtest_output", o.gtest_output_file()}})
    if (path) outputs.emplace_back(name, *path);
  if (auto why = same_output_paths(outputs)) {
    std::fprintf(stderr, "kernodeck-diagnostic: usage error: %s\n", why->c_str());
    return exit_code(Code::UsageError);
  }
  for (const auto& file : {o.output, o.summary_md, o.metrics, o.gtest_output_file()}) {
    if (!file || (o.report_to_stdout() && file == o.output)) continue;
    if (auto why = check_new_file(*file)) {
      std::fprintf(stderr, "kernodeck-diagnostic: OUTPUT_WRITE_FAILED (exit 12): %s\n  next: pick a new, writable file name\n",
                   why->c_str());
      return exit_code(Code::OutputWriteFailed);
    }
  }
  if (o.python && find_executable(*o.python).empty()) {
    std::fprintf(stderr, "kernodeck-diagnostic: usage error: --python: '%s' is not an executable interpreter\n",
                 o.python->c_str());
    return exit_code(Code::UsageError);
  }
  if (o.bundle) {
    if (auto why = check_new_folder(*o.bundle)) {
      std::fprintf(stderr, "kernodeck-diagnostic: OUTPUT_WRITE_FAILED (exit 12): %s\n  next: pick a new folder name\n",
                   why->c_str());
      return exit_code(Code::OutputWriteFailed);
    }
  }
  std::optional<app::SpecFiles> spec_files;  // read once, here: the worker reads a private copy
  nlohmann::json spec_json;                  // the bundle's copy
  if (o.input) {  // a spec that cannot be read or parsed is a usage error: nothing runs
    const std::variant<app::SpecFiles, std::string> files = app::read_checked_spec(*o.input);
    if (const auto* why = std::get_if<std::string>(&files)) {
      std::fprintf(stderr, "kernodeck-diagnostic: usage error: --input: %s\n", why->c_str());
      return exit_code(Code::UsageError);
    }
    spec_files = std::get<0>(files);
    spec_json = nlohmann::json::parse(spec_files->spec, nullptr, false);
  }
  nlohmann::json floors_table;  // --floors FILE checked whole before anything runs; the workers get the table
  if (o.floors) {
    const std::variant<nlohmann::json, std::string> floors = read_floors(*o.floors);
    if (const auto* why = std::get_if<std::string>(&floors)) {
      std::fprintf(stderr, "kernodeck-diagnostic: usage error: --floors %s: %s\n", o.floors->c_str(), why->c_str());
      return exit_code(Code::UsageError);
    }
    floors_table = std::get<0>(floors);
  }
  RunScratch scratch;  // before any thread: it sets TMPDIR for the worker
  if (auto why = scratch.open(spec_files)) {
    // Nothing the user asked to save failed (that is 12): this machine lets no run keep a file anywhere.
    std::fprintf(stderr, "kernodeck-diagnostic: WORKER_FAILED (exit 11): the run's scratch folder: %s\n"
                 "  next: make TMPDIR (or /tmp) a writable folder\n", why->c_str());
    return exit_code(Code::WorkerFailed);
  }
  RunRecord base;
  base.start_mono_ms = events::monotonic_ms();
  // Its value never leaves this process: only what it is (machine/environment.h).
  base.visible_devices_env = machine::device_list_name(machine::check_device_list(std::getenv("CUDA_VISIBLE_DEVICES")));
  base.gtest_environment = gtest_environment_names();
  std::future<nlohmann::json> host = o.host_check ? start_host_check(o.kernel_log_file) : std::future<nlohmann::json>();
  machine::add_host_facts(&base.host, scratch.made());  // always: no other process, about 0.2 ms
  base.run_id = random_run_id();
  base.started_at = utc_now();
  const auto start = Clock::now();

  struct sigaction sa {}, old_int{}, old_term{}, old_hup{};
  sa.sa_handler = on_stop_signal;
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGHUP, &sa, &old_hup);

  // The text for a person: stdout, or stderr when stdout carries the JSON report (--output -).
  std::FILE* human = o.report_to_stdout() ? stderr : stdout;
  const bool tty = ::isatty(::fileno(human)) == 1;
  const char* no_color = std::getenv("NO_COLOR");  // no-color.org: set and not empty
  const bool colour = o.color == "always" || (o.color == "auto" && tty && !(no_color && *no_color));
  // One line per layer as it finishes. --device-index all shows its GPUs' layers at the end, as --verbose
  // does (GoogleTest's lines would interleave) and --in-process (a debug run); --quiet none at all.
  std::unique_ptr<LiveLayers> live;
  if (!o.quiet && !o.verbose && !o.all_devices && !o.in_process) {
    live = std::make_unique<LiveLayers>(layer_infos(), human, tty, colour);
    const std::string header =
        "\n" + render_header(suite_version(), base.run_id, o.cpu_mode() ? "cpu" : fmt::format("cuda:{}", o.device_index));
    std::fwrite(header.data(), 1, header.size(), human);
    std::fflush(human);
  }
  bool worker_left_running = false;  // --in-process, interrupted: its thread is still in a test
  int plans = 0;                     // one run plan per worker
  // One worker and its report. --device-index all calls it once per GPU (runner/all_devices.h).
  auto run_one = [&](const Options& options, bool splits_l4) {
    RunRecord run = base;
    run.options = options;
    Options worker_options = options;
    if (scratch.input_copy()) worker_options.input = scratch.input_copy();
    Role role;
    role.run_id = run.run_id;  // the worker's markers carry it
    role.across_devices = splits_l4;
    role.floors = floors_table;
    const auto run_start = Clock::now();
    if (options.in_process) {
      worker_left_running = !run_in_process(worker_options, role, exe, &run);
    } else {
      run_child(worker_options, role, exe, fmt::format("{}/plan-{}.json", scratch.path(), ++plans), &run, live.get());
    }
    if (host.valid()) base.host.update(host.get());  // at most 3 s from its start, which overlapped the first worker
    run.host = base.host;
    run.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - run_start).count();
    return build_report(run, layer_infos());
  };
  nlohmann::json report = o.all_devices ? check_all_devices(o, run_one, [] { return g_stop_signal != 0; }) : run_one(o, false);
  report::put(&report, report::duration_ms, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  const std::sig_atomic_t signal_before_save = g_stop_signal;

  // SIGXFSZ ignored: a file size limit then fails a write (EFBIG) instead of killing this process
  // halfway through it, which would leave a partial temporary file and no verdict.
  struct sigaction ignore {}, old_xfsz{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ignore, &old_xfsz);
  // A usage error (a filter that matched no test) checked nothing: no report, summary or bundle says otherwise.
  const auto exit_code_of = [](const nlohmann::json& r) {
    return static_cast<int>(report::read(r, report::exit_code).value_or(exit_code(Code::WorkerFailed)));
  };
  const bool usage_error = exit_code_of(report) == exit_code(Code::UsageError);
  const std::string saved = usage_error ? std::string() : save_files(o, &report, spec_json).terminal_text();
  ::sigaction(SIGXFSZ, &old_xfsz, nullptr);
  std::fflush(stdout);
  const std::string text = o.quiet ? render_verdict_line(report, colour)
                                   : render_terminal(report, TerminalView{colour, o.python.value_or(""), !live, !live}) + saved;
  std::fwrite(text.data(), 1, text.size(), human);
  // The stop handlers stay until every file is saved or removed again: a signal in the final write is
  // honoured now, with the files complete and the verdict printed (the report's exit code, never 143).
  if (g_stop_signal && !signal_before_save)
    std::fprintf(human, "Stop signal (SIG%s) received while saving: honoured after the files above were complete\n",
                 sigabbrev_np(g_stop_signal) ? sigabbrev_np(g_stop_signal) : "?");
  std::fflush(human);
  if (o.report_to_stdout() && !usage_error) {  // last, alone on stdout, so that `| jq` reads one document
    const std::string json = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (std::fwrite(json.data(), 1, json.size(), stdout) != json.size() || std::fflush(stdout) != 0) {
      std::fprintf(stderr, "kernodeck-diagnostic: OUTPUT_WRITE_FAILED (exit 12): the report could not be written to stdout\n");
      report::put(&report, report::exit_code, exit_code(Code::OutputWriteFailed));
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  if (worker_left_running) {  // exit() would tear down what the stuck test still uses
    scratch.close();
    std::fflush(stderr);
    std::_Exit(exit_code_of(report));
  }
  return exit_code_of(report);
}

}  // namespace kd
