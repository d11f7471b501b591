// Where a run's scratch folder goes when TMPDIR is missing or not writable: the next usable folder, as mktemp and
// Python's tempfile choose it (TMPDIR, TEMP, TMP, then /tmp, /var/tmp, /usr/tmp, the current folder). A batch job's
// TMPDIR that its cleanup already removed is no reason to fail a run that saves nothing there (docs/contract.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kd::machine {

struct MadeFolder {
  std::string path;                  // the folder made (mkdtemp), mode 0700
  std::string base;                  // the folder it is in
  std::string source;                // which candidate: "TMPDIR", "TEMP", "TMP", "tmp", "var/tmp", "usr/tmp", "current folder"
  std::vector<std::string> skipped;  // the variables set to a folder where nothing could be made
};

// Makes `name` (a mkdtemp pattern ending in XXXXXX) in the first candidate that takes it; nothing when none does.
std::optional<MadeFolder> make_temp_folder(const std::string& name);

}  // namespace kd::machine
