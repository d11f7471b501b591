// Builds without CUDA (Debian's CPU-only LibTorch): the operating range runs on the CPU only,
// where there is no caching allocator to cap or count.
#include <stdexcept>

#include "range_device.h"

namespace kd::probe::range {
namespace {
[[noreturn]] void unsupported() {
  throw std::runtime_error("this probe was built without GPU support: no caching allocator to cap or count");
}
}  // namespace
void set_memory_fraction(int, double) { unsupported(); }
kd_memory_counters counters(int) { unsupported(); }
void reset_peak(int) { unsupported(); }
void release_cache(int) { unsupported(); }
}  // namespace kd::probe::range
