// Declarations only: see probe/gloo_names/README.md. ProcessGroupGloo's inline setTimeout names
// Context::setTimeout; the probe never calls it (the class's vtable, and so that function, is LibTorch's).
#pragma once
#include <chrono>

namespace gloo {
class Context {
 public:
  void setTimeout(std::chrono::milliseconds timeout);
};
}  // namespace gloo
