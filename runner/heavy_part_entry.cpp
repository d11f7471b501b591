// libkd_diagnostic_heavy.so's entry: what it gives the rest of the diagnostic (runner/heavy_part.h), handed over as
// it loads. Its layers and steps register themselves (the suites' KD_LAYER and KD_STEP), with the diagnostic's own
// registry: the library takes kd_core's and GoogleTest's symbols from the executable that loads it.
#include "fixtures/app_contract_io.h"
#include "runner/aggregate_command.h"
#include "runner/batch_job.h"
#include "runner/heavy_part.h"
#include "runner/model_rerun.h"
#include "runner/range_job.h"
#include "runner/shard_job.h"

namespace kd::heavy {
namespace {

std::variant<app::SpecFiles, std::string> read_checked_spec(const std::string& path) {
  auto files = app::read_spec_files(path);
  if (files.index() != 0) return files;
  const auto spec = app::spec_from_files(std::get<0>(files));
  if (const auto* why = std::get_if<std::string>(&spec)) return *why;
  return files;
}

[[maybe_unused]] const bool kProvided = provide({&run_aggregate_command, &run_batch_job, &run_model_rerun, &run_range_job,
                                &run_shard_job, &read_checked_spec});

}  // namespace
}  // namespace kd::heavy
