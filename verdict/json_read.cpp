#include "json_read.h"

namespace kd::json_read {

using nlohmann::json;

const json& field(const json& j, const char* key) {
  static const json null;
  if (!j.is_object()) return null;
  const auto it = j.find(key);
  return it == j.end() ? null : *it;
}

std::string text(const json& j, const char* key, const char* fallback) {
  const json& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

std::optional<double> number(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

std::optional<uint64_t> count(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_number_unsigned() ? std::optional<uint64_t>(v.get<uint64_t>()) : std::nullopt;
}

}  // namespace kd::json_read
