#include "batch_job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "contract/events.h"
#include "contract/run_plan.h"
#include "fixtures/app_contract_io.h"
#include "fixtures/batch_job_folder.h"
#include "fixtures/child_process.h"
#include "fixtures/probe_loader.h"
#include "verdict/app_contract.h"
#include "verdict/resume_check.h"

namespace kd {
namespace {

volatile sig_atomic_t g_stop_requested = 0;
void request_stop(int) { g_stop_requested = 1; }

// Says what failed (its verdict code and why), and exits with `exit` (the step reads the events, the exit says how
// it ended: kBatchJobStopped is a clean stop, not a failure).
int fail(Code code, const std::string& what, int exit = 1) {
  events::emit(events::JobFailed{std::string(name(code)), what});
  return exit;
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The records go out in 64-byte pieces, as a buffered writer's flushes would, a moment apart:
// a batch's writes take time like real work's, and a kill can cut a record in two.
bool write_in_pieces(int fd, const std::string& s) {
  for (size_t at = 0; at < s.size(); at += 64) {
    if (!write_all(fd, s.data() + at, std::min<size_t>(64, s.size() - at))) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return ::fsync(fd) == 0;
}

// Written aside, fsynced, renamed over the old one, the folder fsynced: never half a checkpoint.
bool commit(const BatchJobFolder& folder, const resume::Checkpoint& c) {
  const std::string tmp = folder.checkpoint_aside(), text = resume::checkpoint_text(c);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool ok = write_all(fd, text.data(), text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), folder.checkpoint().c_str()) != 0) return false;
  const int dfd = ::open(folder.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) ::fsync(dfd), ::close(dfd);
  return true;
}

// The internal mode is started by L4's stop/resume step, into the private folder it just made
// (mkdtemp "kd-resume-XXXXXX"): a folder that is not such a one is refused, so that starting it by
// hand cannot write into any folder.
std::optional<std::string> not_a_job_folder(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "not a folder";
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) return "not a private folder of this user";
  if (std::filesystem::path(dir).filename().string().rfind(std::string(kBatchJobFolderPrefix) + "-", 0) != 0)
    return "not a kd-resume-* folder";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!BatchJobFolder::own_file(e.path().filename().string())) return "it holds other files";
  }
  if (ec) return "cannot be listed";
  return std::nullopt;
}

// The step's next word on standard input: 'w' (warm up), any other byte (go), or nothing (its end: the step gave
// up on this job).
std::optional<char> word_given() {
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    return n == 1 ? std::optional(c) : std::nullopt;
  }
}

// Batch `batch` of the job's ids: its inputs on the job's device.
kd_app_embed_in batch_input(const Options& options, int batch) {
  kd_app_embed_in in{};
  in.on_gpu = !options.cpu_mode();
  in.index = options.device_index;
  in.count = in.batch_size = in.rebatch_size = resume::kBatchSize;
  for (int i = 0; i < in.count; ++i) {
    in.ids[i] = int64_t{batch} * resume::kBatchSize + i;
    in.lengths[i] = 1 + static_cast<int>(in.ids[i] * 37 % 64);
  }
  return in;
}

// What a run on a GPU pays before its first batch (the CUDA context, the libraries' handles, the kernels), paid
// while it waits for its go, once the step says the GPU is its own (a warm-up during L4's other steps would hold
// GPU memory that the user's model may need): one batch computed and dropped, nothing written. A failure here is
// the first real batch's to report, after the go.
void warm_up(const kd_probe_table& probe, const Options& options) {
  const kd_app_embed_in in = batch_input(options, 0);
  auto out = std::make_unique<kd_app_embed_out>();
  (void)probe.app_embeddings(&in, out.get());
}

}  // namespace

int run_batch_job(const Plan& plan) {
  speak_as_job();
  const Options& options = plan.options;
  if (auto why = not_a_job_folder(plan.role.job_folder))
    return fail(Code::UsageError, "the batch job is internal (L4's stop/resume step starts it): the folder is " + *why, 2);
  struct sigaction sa {};
  sa.sa_handler = request_stop;
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &sa, nullptr);

  const ProbeLoad probe = load_probe(default_probe_path());
  if (!probe.probe) return fail(probe.code, probe.message, 3);
  // Started ahead (when L4 begins), as a scheduler has a job's next start ready: warmed up when the step says
  // so, and everything the folder holds read only once it says go, after the run before this one has ended.
  if (plan.role.standby) {
    std::optional<char> word = word_given();
    if (word == 'w') {
      if (!options.cpu_mode()) warm_up(*probe.probe, options);  // the CPU has no context to make
      word = word_given();
    }
    if (!word) return kBatchJobStopped;  // L4's stop/resume step ended before it needed this run: nothing to say
  }

  const BatchJobFolder folder{plan.role.job_folder};
  resume::Checkpoint cp;
  if (std::ifstream in(folder.checkpoint()); in) {
    std::stringstream text;
    text << in.rdbuf();
    const auto parsed = resume::parse_checkpoint(text.str());
    if (!parsed) return fail(Code::RuntimeError, "the checkpoint is unreadable");
    cp = *parsed;
  }

  const int fd = ::open(folder.records().c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || ::ftruncate(fd, cp.bytes) != 0 || ::lseek(fd, cp.bytes, SEEK_SET) != cp.bytes)
    return fail(Code::RuntimeError, "cannot open the records at the checkpoint");
  auto out = std::make_unique<kd_app_embed_out>();
  for (int batch = cp.batches_done; batch < resume::kItems / resume::kBatchSize; ++batch) {
    const kd_app_embed_in in = batch_input(options, batch);
    const kd_status s = probe.probe->app_embeddings(&in, out.get());
    if (s.kind != KD_OK) return fail(s.kind == KD_ERR_OUT_OF_MEMORY ? Code::OutOfMemory : Code::RuntimeError, s.message, 9);
    const app::Embeddings e = app::embeddings_from_probe(in, *out, resume::kDim);
    if (const auto v = app::check_embeddings(e, app::Tolerance{})) return fail(Code::AppCheckFailed, "batch contract: " + v->rule, 14);
    std::string records;
    for (int i = 0; i < out->count; ++i) {
      double sum = 0;  // the record's value: the sum of the id's vector as the device computed it
      for (int d = 0; d < out->dim; ++d) sum += out->device[i * out->dim + d];
      records += resume::record_line(out->ids[i], batch, sum);
    }
    if (!write_in_pieces(fd, records)) return fail(Code::RuntimeError, "cannot write the records");
    cp = {batch + 1, cp.records + out->count, cp.bytes + static_cast<int64_t>(records.size())};
    if (!commit(folder, cp)) return fail(Code::RuntimeError, "cannot commit the checkpoint");
    if (g_stop_requested && cp.batches_done < resume::kItems / resume::kBatchSize) return kBatchJobStopped;
  }
  ::close(fd);
  events::emit(events::JobDone{});
  return 0;
}

}  // namespace kd
