// The application's own failures in L4 (README "Layer L4"): its extension libraries, inputs on the
// wrong device, precision mismatches, model files it may not read. Pure, like find_hint, which asks here first.
#pragma once
#include <optional>
#include <string>

#include "hints.h"

namespace kd {
std::optional<Hint> app_hint(Code code, const std::string& message);
}  // namespace kd
