// The output names of an AOTInductor package from its call spec (probe/pytree_names.h), on specs recorded
// from packages torch 2.11 wrote (tests/data/dict_model_cpu.pt2's out_spec is the first).
#include "probe/pytree_names.h"

#include <gtest/gtest.h>

namespace kd::probe {
namespace {

const char* kLeaf = R"({"type": null, "context": null, "children_spec": []})";

std::string node(const std::string& type, const std::string& context, const std::vector<std::string>& children) {
  std::string out = R"({"type": )" + type + R"(, "context": )" + context + R"(, "children_spec": [)";
  for (size_t i = 0; i < children.size(); ++i) out += (i ? ", " : "") + children[i];
  return out + "]}";
}

TEST(PytreeNames, ADictIsNamedByItsKeys) {
  const std::string spec = R"([1, {"type": "builtins.dict", "context": "[\"pooled\", \"hidden\"]", "children_spec": [)"
                           R"({"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}]}])";
  EXPECT_EQ(pytree_leaf_names(spec), (std::vector<std::string>{"pooled", "hidden"}));
}

TEST(PytreeNames, NestedContainersAreJoinedWithDotsAsTorchScriptsAre) {
  const std::string dict = node(R"("builtins.dict")", R"("[\"logits\", \"probs\"]")", {kLeaf, kLeaf});
  const std::string list = node(R"("builtins.list")", "null", {kLeaf});
  const std::string spec = "[1, " + node(R"("builtins.tuple")", "null", {dict, list, kLeaf}) + "]";
  EXPECT_EQ(pytree_leaf_names(spec), (std::vector<std::string>{"0.logits", "0.probs", "1.0", "2"}));
}

TEST(PytreeNames, ALoneTensorIsZero) {
  EXPECT_EQ(pytree_leaf_names(std::string("[1, ") + kLeaf + "]"), (std::vector<std::string>{"0"}));
}

TEST(PytreeNames, WhatItCannotReadIsNoNamesNeverAThrow) {
  for (const char* bad : {"", "[]", "[2, {}]", "[1, {\"type\": \"builtins.dict\", \"context\": \"[\\\"a\\\"]\", "
                          "\"children_spec\": []}]", "[1, {\"type\": 7, \"children_spec\": []}]", "not json"})
    EXPECT_FALSE(pytree_leaf_names(bad)) << bad;
  std::string deep = kLeaf;
  for (int i = 0; i < 100; ++i) deep = node(R"("builtins.tuple")", "null", {deep});
  EXPECT_FALSE(pytree_leaf_names("[1, " + deep + "]"));  // bounded depth
}

}  // namespace
}  // namespace kd::probe
