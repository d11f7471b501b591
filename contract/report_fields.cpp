#include "report_fields.h"

#include "report_parts.h"

namespace kd::report {
namespace {

using nlohmann::json;

bool is_scalar(const json& v) { return v.is_null() || v.is_boolean() || v.is_number() || v.is_string(); }

bool of_kind(Kind kind, const json& v) {
  switch (kind) {
    case Kind::string: return v.is_string();
    case Kind::boolean: return v.is_boolean();
    case Kind::integer: return v.is_number_integer();
    case Kind::number: return v.is_number();
    case Kind::strings:
      if (!v.is_array()) return false;
      for (const auto& item : v)
        if (!item.is_string()) return false;
      return true;
    case Kind::array: return v.is_array();
    case Kind::object: return v.is_object();
    case Kind::flat_object:
      if (!v.is_object()) return false;
      for (const auto& item : v)
        if (!is_scalar(item)) return false;
      return true;
  }
  return false;
}

const json& null_value() {
  static const json kNull;
  return kNull;
}

// v[key] without throwing: null when v is no object or has no such key.
const json& member(const json& v, const std::string& key) {
  if (!v.is_object()) return null_value();
  const auto it = v.find(key);
  return it == v.end() ? null_value() : *it;
}

}  // namespace

#define KD_REPORT_FIELD_INFO(name, definition) name.info,
const std::vector<FieldInfo>& all_fields() {
  static const std::vector<FieldInfo> kAll = {KD_REPORT_FIELDS(KD_REPORT_FIELD_INFO)};
  return kAll;
}

const std::vector<FieldInfo>& supervisor_fields() {
  static const std::vector<FieldInfo> kAll = {KD_REPORT_SUPERVISOR_FIELDS(KD_REPORT_FIELD_INFO)
                                                  KD_REPORT_ENTRY_FIELDS(KD_REPORT_FIELD_INFO)};
  return kAll;
}
const std::vector<FieldInfo>& part_fields() {
  static const std::vector<FieldInfo> kAll = {KD_REPORT_PART_FIELDS(KD_REPORT_FIELD_INFO)};
  return kAll;
}
#undef KD_REPORT_FIELD_INFO

const FieldInfo* find_field(std::string_view pointer) {
  for (const FieldInfo& f : all_fields()) {
    const std::string_view p = f.pointer;
    if (pointer == p && !f.keyed) return &f;
    if (f.keyed && pointer.size() > p.size() + 1 && pointer.substr(0, p.size()) == p && pointer[p.size()] == '/' &&
        pointer.find('/', p.size() + 1) == std::string_view::npos)
      return &f;
  }
  return nullptr;
}

const char* json_type(Kind kind) {
  switch (kind) {
    case Kind::string: return "string";
    case Kind::boolean: return "boolean";
    case Kind::integer: return "integer";
    case Kind::number: return "number";
    case Kind::strings:
    case Kind::array: return "array";
    case Kind::object:
    case Kind::flat_object: return "object";
  }
  return "?";
}

bool fits(const FieldInfo& field, const json& value) {
  return value.is_null() ? field.nullable : of_kind(field.kind, value);
}

const json& value_at(const json& report, const FieldInfo& field) {
  const json* v = &report;
  const std::string_view p = field.pointer;
  for (size_t start = 1; start <= p.size() && !v->is_null();) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    v = &member(*v, std::string(p.substr(start, end - start)));
    start = end + 1;
  }
  if (field.keyed) return v->is_object() ? *v : null_value();
  return !v->is_null() && of_kind(field.kind, *v) ? *v : null_value();
}

}  // namespace kd::report
