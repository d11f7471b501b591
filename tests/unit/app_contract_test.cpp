// Layer L4's contracts: every rule breaks on its own, and says which rule and which output.
#include "fixtures/app_contract.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace kd::app {
namespace {

using kd::test::TempDir;

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

const char* kSpec = R"({"inputs": [{"name": "x", "shape": [4, 8], "dtype": "float32", "range": [-1, 1]},
                                   {"name": "ids", "shape": [2], "dtype": "int64", "values": [3, 7]}],
                        "outputs": {"count": 2, "shapes": [[4, 3], [-1]], "finite": true}})";

TEST(AppContract, SpecParses) {
  const auto r = parse_model_spec(kSpec);
  ASSERT_TRUE(std::holds_alternative<ModelSpec>(r)) << std::get<std::string>(r);
  const ModelSpec& s = std::get<ModelSpec>(r);
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[0].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(s.inputs[0].low, -1);
  EXPECT_EQ(s.inputs[1].dtype, DType::Int64);
  EXPECT_EQ(s.inputs[1].values, (std::vector<double>{3, 7}));
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.shapes[1].second, (std::vector<int64_t>{-1}));
}

TEST(AppContract, BadSpecsNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"{", "JSON"},
      {"[]", "object"},
      {R"({"outputs": {}})", "inputs"},
      {R"({"inputs": [{"shape": [2]}]})", "outputs"},
      {R"({"inputs": [{"name": "x"}], "outputs": {}})", "shape"},
      {R"({"inputs": [{"shape": [2], "dtype": "float8"}], "outputs": {}})", "dtype"},
      {R"({"inputs": [{"shape": [2], "values": [1]}], "outputs": {}})", "values"},
      {R"({"inputs": [{"shape": [2], "range": [1, 0]}], "outputs": {}})", "range"},
      {R"({"inputs": [{"shape": [2], "colour": 1}], "outputs": {}})", "colour"},
      {R"({"inputs": [{"shape": [2]}], "outputs": {"count": -1}})", "count"},
      {R"({"inputs": [{"shape": [2]}], "outputs": {"shapes": [[-2]]}})", "shapes"},
      {R"({"inputs": [{"shape": [2]}], "outputs": {"reference": {"min_cosine": 0.5}}})", "reference"},
      {R"({"inputs": [{"shape": [2]}], "outputs": {"reference": {"file": "r.json", "min_cosine": 2}}})", "min_cosine"},
  };
  for (const auto& [text, word] : cases) {
    const auto r = parse_model_spec(text);
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << text;
    EXPECT_NE(std::get<std::string>(r).find(word), std::string::npos) << text << " -> " << std::get<std::string>(r);
  }
}

std::vector<OutputTensor> outputs() {
  return {{true, "Float", {4, 3}, std::vector<double>(12, 0.5)}, {true, "Long", {5}, {1, 2, 3, 4, 5}}};
}

TEST(AppContract, EachOutputRuleBreaksAlone) {
  const ModelSpec s = std::get<ModelSpec>(parse_model_spec(kSpec));
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

TEST(AppContract, ReferenceFileIsReadNextToTheSpec) {
  TempDir dir;
  const std::string spec = dir.path() + "/spec.json";
  std::ofstream(spec) << R"({"inputs": [{"shape": [2]}], "outputs": {"reference": {"file": "r.json"}}})";
  EXPECT_NE(std::get<std::string>(read_model_spec(spec)).find("cannot read"), std::string::npos);
  std::ofstream(dir.path() + "/r.json") << R"({"embeddings": [[1, 2], [3]]})";
  EXPECT_NE(std::get<std::string>(read_model_spec(spec)).find("one length"), std::string::npos);
  std::ofstream(dir.path() + "/r.json") << R"({"embeddings": [[1, 2], [3, 4]]})";
  const auto ok = read_model_spec(spec);
  ASSERT_TRUE(std::holds_alternative<ModelSpec>(ok)) << std::get<std::string>(ok);
  EXPECT_EQ(std::get<ModelSpec>(ok).reference->embeddings.size(), 2u);
  EXPECT_EQ(std::get<ModelSpec>(ok).reference->min_cosine, 0.9999);
}

TEST(AppContract, ModelFileProblemsSayMissingOrUnreadable) {
  TempDir dir;
  EXPECT_EQ(model_file_problem(dir.path() + "/none.pt")->rfind("missing", 0), 0u);
  EXPECT_EQ(model_file_problem(dir.path())->rfind("unreadable", 0), 0u);
  const std::string f = dir.path() + "/m.pt";
  std::ofstream(f) << "x";
  EXPECT_FALSE(model_file_problem(f).has_value());
  if (::geteuid() != 0) {  // root reads anything
    ::chmod(f.c_str(), 0);
    EXPECT_EQ(model_file_problem(f)->rfind("unreadable", 0), 0u);
  }
}

}  // namespace
}  // namespace kd::app
