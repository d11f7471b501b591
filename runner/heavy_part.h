// The diagnostic's heavy part, libkd_diagnostic_heavy.so beside the executable: L4 to L8's steps and the code that
// only they and `aggregate` use. The first verdict (L1-L3) does not wait for it to be built (scripts/run builds it
// when a run selects one of those layers, or in the background); every process of the diagnostic loads it first
// thing when it is there, so that every run knows every layer. Without it the build's index of its layers and steps
// (generated from the suites, runner/heavy_index.cpp) stands in: listings and filters are the same, and L1.import
// fails for a run that selects one of them (TORCH_IMPORT_FAILED, as for the probe's heavy part).
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "contract/options.h"
#include "fixtures/spec_files.h"

namespace kd::heavy {

struct Part {
  int (*aggregate_command)(const std::vector<std::string>& args);
  int (*batch_job)(const Options&);
  int (*model_rerun)(const Options&);
  int (*range_job)(const Options&);
  int (*shard_job)(const Options&);
  // --input's spec and its reference, read once and checked (the supervisor's copy); or why not.
  std::variant<app::SpecFiles, std::string> (*read_checked_spec)(const std::string& path);
};

// Called by the heavy part's static initialiser as it loads.
bool provide(const Part& part);

// Loads the heavy part beside this executable (once, before anything reads the layers), or registers the index of
// what it holds. A part built for another build of the diagnostic (its stamp names another build ID) is not loaded.
void load();
const Part* part();                  // null when it is not loaded
const std::string& absent_reason();  // why not, with what to do ("" when it is loaded)

}  // namespace kd::heavy
