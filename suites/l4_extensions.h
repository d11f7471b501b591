// L4.extension_load (--extension): the application's custom-operator libraries, loaded into the worker in the
// order given and before the model, each with the operators it registered (/app/extensions).
#pragma once
#include "fixtures/layer_test.h"

namespace kd {
Outcome load_extensions(WorkerContext& ctx);
}  // namespace kd
