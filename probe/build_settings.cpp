#include "build_settings.h"

namespace kd {
namespace {

// Values in "Build settings: K=V, K=V, ..." end at ", " or the end of the line.
std::string value_of(const std::string& text, const std::string& key) {
  const std::string needle = key + "=";
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    const bool at_key_start = pos == 0 || text[pos - 1] == ' ' || text[pos - 1] == ',';
    if (!at_key_start) continue;
    const size_t begin = pos + needle.size();
    size_t end = text.find_first_of(",\n", begin);
    if (end == std::string::npos) end = text.size();
    std::string v = text.substr(begin, end - begin);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.pop_back();
    return v;
  }
  return "";
}

bool is_on(const std::string& v) { return v == "ON" || v == "1" || v == "TRUE" || v == "True"; }

}  // namespace

BuildSettings parse_build_settings(const std::string& text) {
  BuildSettings s;
  s.torch_version = value_of(text, "TORCH_VERSION");
  s.use_cuda = is_on(value_of(text, "USE_CUDA"));
  s.use_rocm = is_on(value_of(text, "USE_ROCM"));
  if (s.use_cuda) s.cuda_version = value_of(text, "CUDA_VERSION");
  if (s.use_rocm) s.hip_version = value_of(text, "ROCM_VERSION");
  return s;
}

}  // namespace kd
