// The heavy part's layers and steps, for a diagnostic without it (runner/heavy_part.h): the build copies each
// KD_LAYER and KD_STEP line of L4 to L8's suites into heavy_index.inc (CMakeLists.txt), so the names, stages,
// prerequisites and order are the suites' own. Each step stands for one that is not here: it fails as L1.import does.
#include "fixtures/layer_test.h"
#include "runner/heavy_part.h"

namespace kd::heavy {
namespace {

Outcome absent_step(WorkerContext&) { return Outcome::fail(Code::TorchImportFailed, absent_reason()); }

}  // namespace

// heavy_index.inc's lines are the suites' own, with KD_LAYER and KD_STEP renamed to these.
#define KD_INDEX_LAYER(NUMBER, SUITE, TITLE, ON_BY_DEFAULT) add_layer({NUMBER, "L" #NUMBER, #SUITE, TITLE, ON_BY_DEFAULT})
#define KD_INDEX_STEP(LAYER, SUITE, TEST, STAGE, ...) \
  add_step({LAYER, #SUITE, #TEST, STAGE, {__VA_ARGS__}, &absent_step, "libkd_diagnostic_heavy.so", 0})

void register_index() {
#include "heavy_index.inc"
}

}  // namespace kd::heavy
