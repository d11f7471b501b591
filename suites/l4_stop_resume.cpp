// L4 clean stop and resume: the batch job (fixtures/batch_job_folder.h) runs as a child process and is
// stopped for real — SIGTERM after kStopAfter batches (it finishes the batch in progress), then
// SIGKILL while a later batch's records are being written — and resumed each time; at the end every
// id must be present exactly once, no record torn, the checkpoint covering the file (resume_check.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "fixtures/batch_job_folder.h"
#include "fixtures/child_process.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "fixtures/scratch_folder.h"
#include "verdict/resume_check.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kStopAfter = 3, kKillAfter = 5, kBatches = resume::kItems / resume::kBatchSize;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Job : BatchJobFolder {
  resume::Checkpoint committed() const {  // batches done so far (none before the first commit)
    return resume::parse_checkpoint(read_file(checkpoint())).value_or(resume::Checkpoint{});
  }
  int64_t written() const {  // bytes of records on disk, committed or not
    struct stat st {};
    return ::stat(records().c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
  }
  std::string failure() const { return read_job(log()).failure(); }  // what the job said failed
};

// This program as the batch job, on the worker's device.
Plan job_plan(const WorkerContext& ctx, const Job& job) {
  Plan plan;
  plan.role.kind = ProcessRole::BatchJob;
  plan.role.job_folder = job.dir;
  plan.options.device = ctx.options.device;
  plan.options.device_index = ctx.device_index();
  return plan;
}

// A run of the job started ahead, when L4 begins: it loads LibTorch while L4's other steps work, makes its CUDA
// context on warm() (once the step has the GPU: no GPU memory is held during the other steps), both paid on the
// step's path otherwise, and touches the folder only after go(), once the run before it has ended. Stopped and
// reaped if never used.
class StandbyJob {
 public:
  StandbyJob(const WorkerContext& ctx, const Job& job) {
    int p[2];  // a socket, not a pipe: a go to a job that already ended is an error, never SIGPIPE
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) return;
    Plan plan = job_plan(ctx, job);
    plan.role.standby = true;
    pid_ = start_job(ctx, plan, job.dir, job.log(), p[0]);
    ::close(p[0]);
    go_fd_ = p[1];
    if (pid_ < 0) release();
  }
  StandbyJob(const StandbyJob&) = delete;
  StandbyJob& operator=(const StandbyJob&) = delete;
  ~StandbyJob() {
    if (pid_ > 0) ::kill(pid_, SIGKILL), wait_exit(pid_);
    release();
  }
  void warm() { say('w'); }
  // The job begins; from here its pid is the caller's to stop and reap (-1: it could not start). A job
  // that ended while waiting (LibTorch did not load) gets no go: the caller reaps it and reads its log.
  pid_t go() {
    say('g');
    const pid_t pid = pid_;
    pid_ = -1;
    release();
    return pid;
  }

 private:
  void say(char word) {
    if (go_fd_ >= 0) (void)::send(go_fd_, &word, 1, MSG_NOSIGNAL);
  }
  void release() {
    if (go_fd_ >= 0) ::close(go_fd_);
    go_fd_ = -1;
  }
  pid_t pid_ = -1;
  int go_fd_ = -1;
};

// The step's folder and its job's three runs, started when L4 begins and taken by the step; stopped, and the folder
// removed, when L4 ends if the step did not take them (it was blocked by an earlier failure).
struct Runs {
  explicit Runs(const WorkerContext& ctx) : job{{folder.path}} {
    if (folder.path.empty()) return;
    for (auto& run : runs) run.emplace(ctx, job);
  }
  ScratchFolder folder{kBatchJobFolderPrefix};
  Job job;
  std::optional<StandbyJob> runs[3];  // stopped with SIGTERM, with SIGKILL, then left to finish
};

std::unique_ptr<Runs>& started_ahead() {
  static std::unique_ptr<Runs> runs;
  return runs;
}


// Past `after` batches and in the middle of the next one: some of its records on disk, not yet committed.
bool mid_batch(const Job& job, int after) {
  const resume::Checkpoint c = job.committed();
  return c.batches_done >= after && job.written() > c.bytes;
}

// Polls until `ready` holds (nullopt) or the job has exited (its wait status).
std::optional<int> wait_until(pid_t pid, const std::function<bool()>& ready) {
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    if (ready()) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// One run of the job as the report lists it: the signal sent (none: left to finish), where it started, after how many
// batches the signal went, where it ended, how, and the bytes past its checkpoint.
json run_json(std::optional<std::string> signal, int started_at, std::optional<int64_t> sent_after, int ended_at, int status,
              int64_t uncommitted) {
  json run = json::object();
  report::put(&run, report::resume_run_signal, signal);
  report::put(&run, report::resume_run_started_at, started_at);
  report::put(&run, report::resume_run_sent_after, sent_after);
  report::put(&run, report::resume_run_ended_at, ended_at);
  report::put(&run, report::resume_run_exit, how_it_ended(status));
  report::put(&run, report::resume_run_uncommitted_bytes, uncommitted);
  return run;
}

Outcome broken(const std::string& rule, const std::string& output, const std::string& message) {
  return Outcome::fail(Code::AppCheckFailed, fmt::format("rule '{}', {}: {}", rule, output, message));
}

}  // namespace

// Its prelude: the batch job's three runs start when L4 begins, so that they load LibTorch while L4's other steps
// work; what the step did not take is stopped when the layer ends.
void l4_stop_resume_ahead(WorkerContext& ctx) { started_ahead() = std::make_unique<Runs>(ctx); }
void l4_stop_resume_ahead_end() { started_ahead().reset(); }

Outcome l4_stop_resume(WorkerContext& ctx) {
  // Taken, or made now (the step run without its layer's start, as an in-process run's prerequisite may be).
  std::unique_ptr<Runs> ahead = std::move(started_ahead());
  if (!ahead) ahead = std::make_unique<Runs>(ctx);
  if (ahead->folder.path.empty())
    return Outcome::fail(Code::RuntimeError, "cannot create a scratch folder for the batch job");
  const Job& job = ahead->job;
  StandbyJob &first = *ahead->runs[0], &second = *ahead->runs[1], &third = *ahead->runs[2];
  json runs = json::array();
  auto record = [&](const std::string& contract) {  // the step's fact, with the runs so far
    json facts = json::object();
    report::put(&facts, report::stop_resume_items, resume::kItems);
    report::put(&facts, report::stop_resume_batch_size, resume::kBatchSize);
    report::put(&facts, report::stop_resume_batches, kBatches);
    report::put(&facts, report::stop_resume_runs, runs);
    report::put(&facts, report::stop_resume_contract, contract);
    ctx.fact(report::app_stop_resume, facts);
  };
  // A run the job should not have ended the way it did: the job's own last words, when it failed.
  auto unexpected = [&](const std::string& what, int status) {
    record("stop");
    const std::string log = job.failure();
    const bool job_failed = WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != kBatchJobStopped;
    if (job_failed) return Outcome::fail(Code::RuntimeError, fmt::format("the batch job failed ({}): {}", how_it_ended(status), log));
    return broken("stop", what, fmt::format("the job ended with {} after {} of {} batches", how_it_ended(status),
                                            job.committed().batches_done, kBatches));
  };

  // 1. SIGTERM in the middle of the batch after kStopAfter: a clean stop finishes that batch and commits it.
  pid_t pid = first.go();
  if (pid < 0) return Outcome::fail(Code::RuntimeError, "cannot start the batch job");  // never kill(-1, ...)
  second.warm();  // while the first run works
  third.warm();
  if (auto ended = wait_until(pid, [&] { return mid_batch(job, kStopAfter); }))
    return unexpected("SIGTERM", *ended);
  int sent_after = job.committed().batches_done;
  ::kill(pid, SIGTERM);
  int status = wait_exit(pid);
  resume::Checkpoint cp = job.committed();
  runs.push_back(run_json("SIGTERM", 0, sent_after, cp.batches_done, status, job.written() - cp.bytes));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kBatchJobStopped) return unexpected("SIGTERM", status);
  if (job.written() != cp.bytes || cp.batches_done != sent_after + 1)
    return broken("clean_stop", "SIGTERM", fmt::format("the batch in progress was not finished and committed ({} bytes past "
                                                       "checkpoint {})", job.written() - cp.bytes, cp.batches_done));

  // 2. Resumed, then SIGKILL while a batch after kKillAfter is being written: no chance to finish it.
  const int resumed = cp.batches_done;
  pid = second.go();
  if (pid < 0) return Outcome::fail(Code::RuntimeError, "cannot start the batch job");  // never kill(-1, ...)
  if (auto ended = wait_until(pid, [&] { return mid_batch(job, kKillAfter); }))
    return unexpected("SIGKILL", *ended);
  sent_after = job.committed().batches_done;
  ::kill(pid, SIGKILL);
  status = wait_exit(pid);
  cp = job.committed();
  const std::string on_disk = read_file(job.records());
  runs.push_back(run_json("SIGKILL", resumed, sent_after, cp.batches_done, status, static_cast<int64_t>(on_disk.size()) - cp.bytes));
  report::put(&runs.back(), report::resume_run_torn_tail, !on_disk.empty() && on_disk.back() != '\n');
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) return unexpected("SIGKILL", status);

  // 3. Resumed to the end: it cuts the file back to the checkpoint, then does the remaining batches.
  pid = third.go();
  if (pid < 0) return Outcome::fail(Code::RuntimeError, "cannot start the batch job");  // never kill(-1, ...)
  const int last_start = cp.batches_done;
  status = wait_exit(pid);
  cp = job.committed();
  runs.push_back(run_json(std::nullopt, last_start, std::nullopt, cp.batches_done, status, job.written() - cp.bytes));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return unexpected("resume", status);

  const auto v = resume::verify(read_file(job.records()), resume::parse_checkpoint(read_file(job.checkpoint())),
                                resume::kItems);
  record(v ? v->rule : "passed");
  return v ? broken(v->rule, v->output, v->message) : Outcome::pass();
}

}  // namespace kd
