// Fuzzes the reader of a TorchScript data.pkl's tensor storages (fixtures/pickle_storages.cpp) on
// arbitrary bytes: the pickle is the user's, and its lengths, memo indices and nesting come from it.
// Beyond "no crash, no sanitizer report": a storage's byte count is its element count times a known
// element size, or 0 for an unknown type, never an overflowed product.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fixtures/pickle_storages.h"

#define check(ok) ((ok) ? (void)0 : (std::fprintf(stderr, "property failed: %s (line %d)\n", #ok, __LINE__), std::abort()))

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto storages = kd::app::pickled_storages(bytes);
  if (!storages) return 0;
  for (const auto& s : *storages) {
    check(s.bytes == 0 || s.bytes >= s.numel);
    check(s.numel == 0 || s.bytes % s.numel == 0);
  }
  return 0;
}
