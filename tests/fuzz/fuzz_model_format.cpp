// Fuzzes the --model format reader (fixtures/model_format.cpp) on arbitrary bytes: a user's file is
// untrusted, and the zip directory's offsets and sizes come from it. Beyond "no crash, no sanitizer
// report": it never asks for bytes past the end or for more than the file holds, and an unknown
// file always says what it is instead.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fixtures/model_format.h"

#define check(ok) ((ok) ? (void)0 : (std::fprintf(stderr, "property failed: %s (line %d)\n", #ok, __LINE__), std::abort()))

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const kd::app::ReadAt read = [&bytes](uint64_t offset, size_t n) {
    check(n <= bytes.size());  // never more than the file holds (a nonsense size is refused before reading)
    return offset >= bytes.size() ? std::string() : bytes.substr(offset, n);
  };
  const kd::app::ModelFile f = kd::app::inspect_model(read, bytes.size());
  check(f.format != kd::app::ModelFormat::Unknown || !f.why.empty());
  return 0;
}
