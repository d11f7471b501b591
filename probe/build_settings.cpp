#include "build_settings.h"

#include <algorithm>
#include <cstdlib>

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

std::vector<std::string> parse_arch_list(const std::string& text) {
  std::vector<std::string> list;
  const size_t line_at = text.find("NVCC architecture flags:");
  if (line_at == std::string::npos) return list;
  const std::string line = text.substr(line_at, text.find('\n', line_at) - line_at);
  for (size_t pos = line.find("code="); pos != std::string::npos; pos = line.find("code=", pos + 5)) {
    // "code=sm_90" or "code=[sm_90,compute_90]"
    size_t begin = pos + 5;
    if (begin < line.size() && line[begin] == '[') ++begin;
    const size_t end = line.find_first_of(";] \n", begin);
    std::string codes = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    for (size_t start = 0; start <= codes.size();) {
      const size_t comma = codes.find(',', start);
      const std::string one = codes.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!one.empty() && std::find(list.begin(), list.end(), one) == list.end()) list.push_back(one);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return list;
}

// "sm_90a" -> 90; "compute_75" -> 75; -1 when it is neither.
int arch_number(const std::string& code, const char* prefix) {
  const std::string p = prefix;
  if (code.rfind(p, 0) != 0) return -1;
  return std::atoi(code.c_str() + p.size());
}

}  // namespace

std::optional<bool> arch_covers(const std::vector<std::string>& list, int major, int minor) {
  if (list.empty()) return std::nullopt;
  const int device = major * 10 + minor;
  for (const auto& code : list) {
    if (arch_number(code, "sm_") == device) return true;  // machine code for exactly this device
    const int ptx = arch_number(code, "compute_");
    if (ptx > 0 && ptx <= device) return true;  // PTX the driver compiles for a newer device
  }
  return false;
}

BuildSettings parse_build_settings(const std::string& text) {
  BuildSettings s;
  s.torch_version = value_of(text, "TORCH_VERSION");
  s.use_cuda = is_on(value_of(text, "USE_CUDA"));
  s.use_rocm = is_on(value_of(text, "USE_ROCM"));
  if (s.use_cuda) s.cuda_version = value_of(text, "CUDA_VERSION");
  if (s.use_rocm) s.hip_version = value_of(text, "ROCM_VERSION");
  s.arch_list = parse_arch_list(text);
  return s;
}

}  // namespace kd
