#include "pytree_names.h"

#include <nlohmann/json.hpp>

namespace kd::probe {
namespace {

using nlohmann::json;

bool is_mapping(const std::string& type) {
  return type == "builtins.dict" || type == "collections.OrderedDict" || type == "collections.defaultdict";
}

// Appends the leaves under `node`; false when the node is not what treespec_dumps writes.
bool leaves(const json& node, const std::string& path, int depth, std::vector<std::string>* out) {
  if (!node.is_object() || depth > 64 || !node.contains("children_spec") || !node["children_spec"].is_array()) return false;
  const json& children = node["children_spec"];
  const json type = node.value("type", json());
  if (type.is_null()) {  // a leaf
    out->push_back(path.empty() ? "0" : path);
    return children.empty();
  }
  if (!type.is_string()) return false;
  std::vector<std::string> keys;
  if (is_mapping(type.get<std::string>())) {  // the context is the keys, as a JSON text of a list
    const json context = node.value("context", json());
    const json parsed = context.is_string() ? json::parse(context.get<std::string>(), nullptr, false) : json();
    if (!parsed.is_array() || parsed.size() != children.size()) return false;
    for (const auto& k : parsed) keys.push_back(k.is_string() ? k.get<std::string>() : k.dump());
  }
  for (size_t i = 0; i < children.size(); ++i) {
    const std::string part = keys.empty() ? std::to_string(i) : keys[i];
    if (!leaves(children[i], path.empty() ? part : path + "." + part, depth + 1, out)) return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> pytree_leaf_names(const std::string& spec) {
  const json j = json::parse(spec, nullptr, false);
  if (!j.is_array() || j.size() != 2 || j[0] != 1) return std::nullopt;  // [protocol 1, the tree]
  std::vector<std::string> names;
  if (!leaves(j[1], "", 0, &names)) return std::nullopt;
  return names;
}

}  // namespace kd::probe
