// The run's own scratch folder, TMPDIR/kd-run-XXXXXX (mode 0700; when TMPDIR is missing or not writable, in the
// next usable folder: machine/temp_folder.h). The supervisor makes it the
// worker's TMPDIR, so that everything the worker and LibTorch create there (the extracted .pt2
// package with the user's weights, kd-resume-*, kd-train-*) lies inside it, and removes it when the
// run is over: after the worker ended, was killed or timed out. With --input it also holds the
// private copy of the spec (and its reference) that the worker reads instead of the user's file.
// A supervisor killed with SIGKILL cannot remove its folder: the folder's name carries the owner's pid
// (kd-run-<pid>-XXXXXX) and the owner holds a lock on its .owner file while it lives, so that the next
// run removes the folders whose owner is gone and never touches those of a run still going.
#pragma once
#include <optional>
#include <string>

#include "fixtures/spec_files.h"
#include "machine/temp_folder.h"

namespace kd {

class RunScratch {
 public:
  RunScratch() = default;
  RunScratch(const RunScratch&) = delete;
  RunScratch& operator=(const RunScratch&) = delete;
  ~RunScratch() { close(); }
  void close();  // TMPDIR restored, the folder removed (again: nothing)

  // Creates the folder under the current TMPDIR (or the next usable folder) and makes it this process's (and so
  // the worker's) TMPDIR; writes the spec's private copy. Call before any thread starts. Why not, or nothing.
  std::optional<std::string> open(const std::optional<app::SpecFiles>& spec);

  const std::string& path() const { return path_; }
  const std::optional<std::string>& input_copy() const { return input_copy_; }  // the worker's --input
  const machine::MadeFolder* made() const { return made_ ? &*made_ : nullptr; }  // where it went, for host.temp

 private:
  std::string path_;
  std::optional<machine::MadeFolder> made_;
  std::optional<std::string> old_tmpdir_;
  bool tmpdir_set_ = false;
  std::optional<std::string> input_copy_;
  int lock_fd_ = -1;
};

// Removes base's kd-run-<pid>-* folders whose owner process is gone (its lock is free); returns how many.
int remove_stale_scratch(const std::string& base);

}  // namespace kd
