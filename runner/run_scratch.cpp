#include "run_scratch.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "contract/run_plan.h"
#include "machine/temp_folder.h"

namespace kd {
namespace {

// The owner's pid from "kd-run-<pid>-XXXXXX", or 0.
pid_t owner_pid(const std::string& name) {
  const std::string prefix = "kd-run-";
  if (name.rfind(prefix, 0) != 0) return 0;
  const size_t dash = name.find('-', prefix.size());
  if (dash == std::string::npos || dash == prefix.size() || dash - prefix.size() > 9) return 0;
  const std::string digits = name.substr(prefix.size(), dash - prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<pid_t>(std::stol(digits));
}

}  // namespace

int remove_stale_scratch(const std::string& base) {
  int removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t pid = owner_pid(name);
    struct stat st {};
    if (pid <= 0 || ::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (::kill(pid, 0) == 0 || errno == EPERM) continue;  // its owner (or a process with its pid) lives
    // The pid may belong to another pid namespace sharing this folder: the lock decides, held while the owner lives.
    const int fd = ::open((it->path() / ".owner").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;  // not made by this version, or still being made: left alone
    const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (free) {
      std::error_code rm;
      std::filesystem::remove_all(it->path(), rm);
      if (!rm) ++removed;
    }
    ::close(fd);
  }
  return removed;
}

std::optional<std::string> RunScratch::open(const std::optional<app::SpecFiles>& spec) {
  // TMPDIR first; one that is missing or not writable is passed over, as mktemp and Python's tempfile do.
  made_ = machine::make_temp_folder(fmt::format("kd-run-{}-XXXXXX", ::getpid()));
  if (!made_) return "no folder can be created in TMPDIR, TEMP, TMP, /tmp, /var/tmp, /usr/tmp or the current folder";
  path_ = made_->path;
  remove_stale_scratch(made_->base);  // this run's own folder is skipped: its owner lives
  lock_fd_ = ::open((path_ + "/.owner").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) return "cannot lock the scratch folder";
  if (const char* old = std::getenv("TMPDIR")) old_tmpdir_ = old;
  if (::setenv("TMPDIR", path_.c_str(), 1) != 0) return "cannot set TMPDIR";
  tmpdir_set_ = true;
  if (!spec) return std::nullopt;
  std::string text = spec->spec;
  if (spec->reference) {  // the copy names its own copy of the reference, next to it
    if (!write_private_file(path_ + "/reference.json", *spec->reference)) return "cannot copy the reference file";
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);  // read_spec_files parsed it (depth bounded)
    if (j.is_discarded()) return "the spec changed";
    j["outputs"]["reference"]["file"] = "reference.json";
    text = j.dump();
  }
  if (!write_private_file(path_ + "/input.json", text)) return "cannot copy the spec";
  input_copy_ = path_ + "/input.json";
  return std::nullopt;
}

void RunScratch::close() {
  if (tmpdir_set_) {
    if (old_tmpdir_) ::setenv("TMPDIR", old_tmpdir_->c_str(), 1);
    else ::unsetenv("TMPDIR");
    tmpdir_set_ = false;
  }
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);  // before the lock goes: no one else removes it
  path_.clear();
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

}  // namespace kd
