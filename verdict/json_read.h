// Reading one field of a JSON value that may be malformed (a broken worker's event, a report read
// back from a file) without throwing: a field that is absent, or of another type, reads as absent.
// nlohmann's own accessors do not do that: const operator[] on a missing key is undefined
// behaviour, value() throws on a field of another type. The supervisor must never die of a bad field.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kd::json_read {

// j[key], or null when j is not an object or has no such key.
const nlohmann::json& field(const nlohmann::json& j, const char* key);

// j[key] when it is a string, else fallback.
std::string text(const nlohmann::json& j, const char* key, const char* fallback = "");

// j[key] when it is a number, else nothing.
std::optional<double> number(const nlohmann::json& j, const char* key);

// j[key] when it is an unsigned integer (bytes, items), else nothing.
std::optional<uint64_t> count(const nlohmann::json& j, const char* key);

// j[key] as T, or nothing when it is absent, null or of another type (a fact a driver does not report).
template <class T>
std::optional<T> value_of(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = field(j, key);
  if (v.is_null()) return std::nullopt;
  try {
    return v.get<T>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace kd::json_read
