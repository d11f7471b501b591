// The layers and their steps, in the contract's order (docs/contract.md): the one list from which the worker
// registers its tests, and listings, --layers, filters, CTest's conformance tests and the terminal's layer lines
// come. Link order, unity builds and GoogleTest's own ordering never change it.
#pragma once
#include "fixtures/layer_test.h"

namespace kd {

const LayerList& layers();

// Whether this program holds every layer's steps: kernodeck-diagnostic-full does; kernodeck-diagnostic holds
// L1-L3's (the first verdict) and hands a run that needs more to kernodeck-diagnostic-full (runner/full_program.h).
bool holds_every_layer();

}  // namespace kd
