// Layer L4's contracts: every rule breaks on its own, and says which rule and which output.
#include "verdict/app_contract.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "fixtures/app_contract_io.h"

namespace kd::app {
namespace {

Embeddings good() {
  Embeddings e;
  e.input_ids = {1, 2, 3};
  e.output_ids = {3, 1, 2};  // batching reorders: fine as long as each id comes once
  e.dim = e.expected_dim = 2;
  e.device = {0.5f, -0.25f, 1.f, 2.f, 0.f, 1e-3f};
  e.reference = e.device;
  e.rebatched = e.device;
  return e;
}

std::string rule_of(const std::optional<Violation>& v) { return v ? v->rule : "none"; }

TEST(AppContract, GoodEmbeddingsPass) { EXPECT_EQ(rule_of(check_embeddings(good(), {})), "none"); }

TEST(AppContract, EachEmbeddingRuleBreaksAlone) {
  Embeddings e = good();
  e.output_ids = {3, 1};
  EXPECT_EQ(rule_of(check_embeddings(e, {})), "count");
  e = good();
  e.output_ids = {3, 1, 1};
  const auto ids = check_embeddings(e, {});
  EXPECT_EQ(rule_of(ids), "ids");
  EXPECT_EQ(ids->output, "id 1");
  e = good();
  e.dim = 3;
  EXPECT_EQ(rule_of(check_embeddings(e, {})), "dimension");
  e = good();
  e.device[3] = std::numeric_limits<float>::quiet_NaN();
  const auto nan = check_embeddings(e, {});
  EXPECT_EQ(rule_of(nan), "finite");
  EXPECT_EQ(nan->output, "id 1");
  e = good();
  e.device[4] += 1e-3f;
  EXPECT_EQ(rule_of(check_embeddings(e, {})), "cpu_reference");
  e = good();
  e.rebatched[0] += 1e-2f;
  EXPECT_EQ(rule_of(check_embeddings(e, {})), "batch_size");
}

TEST(AppContract, AgreementRecordsTheLargestErrors) {
  const float got[] = {1.0f, 2.0f, -4.0f}, ref[] = {1.0f, 2.002f, -4.0f};
  const Agreement a = compare(got, ref, 3, {1e-5, 1e-4});
  EXPECT_FALSE(a.within);
  EXPECT_EQ(a.first_bad, 1);
  EXPECT_NEAR(a.max_abs, 0.002, 1e-6);
  EXPECT_NEAR(a.max_rel, 0.002 / 2.002, 1e-6);
  EXPECT_TRUE(compare(got, got, 3, {}).within);
}

// A contract's outputs part, written as the user writes it (the spec's reader: app_contract_io_test.cpp).
ModelSpec spec_of(const char* outputs) {
  const auto r = parse_model_spec(std::string(R"({"inputs": [{"shape": [2]}], "outputs": )") + outputs + "}");
  EXPECT_TRUE(std::holds_alternative<ModelSpec>(r)) << std::get<std::string>(r);
  return std::get<ModelSpec>(r);
}

std::vector<OutputTensor> outputs() {
  return {{true, "Float", {4, 3}, std::vector<double>(12, 0.5)}, {true, "Long", {5}, {1, 2, 3, 4, 5}}};
}

TEST(AppContract, EachOutputRuleBreaksAlone) {
  const ModelSpec s = spec_of(R"({"count": 2, "shapes": [[4, 3], [-1]], "finite": true})");
  EXPECT_EQ(rule_of(check_outputs(s, outputs())), "none");
  auto o = outputs();
  o.pop_back();
  EXPECT_EQ(rule_of(check_outputs(s, o)), "count");
  o = outputs();
  o[0].shape = {4, 2};
  const auto shape = check_outputs(s, o);
  EXPECT_EQ(rule_of(shape), "shape");
  EXPECT_EQ(shape->output, "output 0");
  o = outputs();
  o[1].data[2] = INFINITY;
  const auto finite = check_outputs(s, o);
  EXPECT_EQ(rule_of(finite), "finite");
  EXPECT_EQ(finite->output, "output 1");
  o = outputs();
  o[1] = {false, "String", {}, {}};
  EXPECT_EQ(rule_of(check_outputs(s, o)), "type");
}

// A transformer-style dict output: leaves named by key, in the model's order.
std::vector<OutputTensor> dict_outputs() {
  return {{true, "Float", {2, 8}, std::vector<double>(16, 0.5), "pooled", "cuda:0"},
          {true, "Float", {2, 5, 8}, std::vector<double>(80, 0.5), "hidden", "cuda:0"},
          {false, "String", {}, {}, "version", ""}};
}

TEST(AppContract, RulesAddressOutputsByNameOrPosition) {
  const auto o = dict_outputs();
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({"count": 3, "shapes": {"pooled": [2, 8], "hidden": [2, -1, 8]}})"), o)), "none");
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({"shapes": [[2, 8], [2, 5, 8]]})"), o)), "none");  // by position
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({"shapes": {"1": [2, 5, 8]}})"), o)), "none");     // a number: a position
  const auto shape = check_outputs(spec_of(R"({"shapes": {"hidden": [2, 8]}})"), o);
  EXPECT_EQ(rule_of(shape), "shape");
  EXPECT_EQ(shape->output, "output 'hidden'");
  EXPECT_EQ(shape->message, "output 'hidden' has shape [2,5,8], the contract says [2,8]");
  const auto unknown = check_outputs(spec_of(R"({"shapes": {"logits": [2, 8]}})"), o);
  EXPECT_EQ(rule_of(unknown), "name");
  EXPECT_EQ(unknown->message, "the contract names output 'logits'; the model returned 3 outputs: pooled, hidden, version");
  auto nan = o;
  nan[1].data[3] = NAN;
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({})"), nan)), "finite");
  EXPECT_EQ(check_outputs(spec_of(R"({})"), nan)->output, "output 'hidden'");
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({"finite": {"hidden": false}})"), nan)), "none");  // allowed there only
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({"finite": {"pooled": false}})"), nan)), "finite");
}

TEST(AppContract, ANonTensorLeafFailsTypeOnlyWhenARuleAsksForATensor) {
  const auto o = dict_outputs();
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({"count": 3})"), o)), "none");
  const auto type = check_outputs(spec_of(R"({"shapes": {"version": [1]}})"), o);
  EXPECT_EQ(rule_of(type), "type");
  EXPECT_EQ(type->message, "output 'version' is a String, not a tensor");
  EXPECT_EQ(rule_of(check_outputs(spec_of(R"({"finite": {"version": true}})"), o)), "type");
}

InputSpec input(const char* name) {
  InputSpec s;
  s.name = name;
  s.named = true;
  return s;
}

TEST(AppContract, InputsAreCheckedAgainstForward) {
  const auto params = parse_signature("input_ids\tTensor\t0\nattention_mask\tTensor\t0\nscale\tfloat\t1\n");
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(signature_text(params), "forward(input_ids: Tensor, attention_mask: Tensor, scale: float = ...)");
  EXPECT_EQ(rule_of(check_signature({input("attention_mask"), input("input_ids")}, params)), "none");  // by keyword
  EXPECT_EQ(rule_of(check_signature({InputSpec{}, InputSpec{}}, params)), "none");                  // by position
  const auto unknown = check_signature({input("input_ids"), input("mask")}, params);
  EXPECT_EQ(rule_of(unknown), "inputs");
  EXPECT_EQ(unknown->output, "input 'mask'");
  EXPECT_EQ(unknown->message, "forward(input_ids: Tensor, attention_mask: Tensor, scale: float = ...) has no parameter 'mask'");
  const auto missing = check_signature({input("input_ids")}, params);
  EXPECT_EQ(missing->output, "parameter 'attention_mask'");
  EXPECT_NE(missing->message.find("requires 'attention_mask', which the spec does not give"), std::string::npos);
  const auto twice = check_signature({InputSpec{}, input("input_ids")}, params);  // position 0 is input_ids already
  EXPECT_NE(twice->message.find("already given by inputs[0]"), std::string::npos);
  const auto many = check_signature({InputSpec{}, InputSpec{}, InputSpec{}, InputSpec{}}, params);
  EXPECT_EQ(many->message, "the spec gives 4 inputs, forward(input_ids: Tensor, attention_mask: Tensor, scale: float = ...) takes 3");
}

// Two reference vectors of dimension 3 and an output that matches them up to a scale (cosine 1).
ModelSpec reference_spec() {
  ModelSpec s;
  s.reference = ReferenceSpec{"r.json", 0.9999, {{1, 0, 0}, {0.6, 0.8, 0}}};
  return s;
}
OutputTensor embeddings(std::vector<double> data) { return {true, "Float", {2, 3}, std::move(data)}; }

TEST(AppContract, ReferenceRuleComparesEachVectorByCosine) {
  const ModelSpec s = reference_spec();
  EXPECT_EQ(rule_of(check_outputs(s, {embeddings({2, 0, 0, 0.6, 0.8, 0})})), "none");
  EXPECT_NEAR(min_reference_cosine(*s.reference, embeddings({2, 0, 0, 0.6, 0.8, 0})), 1.0, 1e-12);
  const auto off = check_outputs(s, {embeddings({1, 0, 0, 0.6, 0.7, 0.1})});  // id 1 turned a little
  EXPECT_EQ(rule_of(off), "reference");
  EXPECT_EQ(off->output, "id 1");
  EXPECT_EQ(rule_of(check_outputs(s, {{true, "Float", {3, 3}, std::vector<double>(9, 1)}})), "reference");  // one vector too many
  EXPECT_EQ(rule_of(check_outputs(s, {embeddings({0, 0, 0, 0.6, 0.8, 0})})), "reference");  // a zero vector: NaN cosine
  EXPECT_TRUE(std::isnan(min_reference_cosine(*s.reference, {true, "Float", {2, 2}, {1, 0, 0, 1}})));
}

}  // namespace
}  // namespace kd::app
