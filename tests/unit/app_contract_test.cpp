// Layer L4's contracts: every rule breaks on its own, and says which rule and which output.
#include "fixtures/app_contract.h"
#include "fixtures/input_limits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>
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

TEST(AppContract, AnInputMayStayOnTheHost) {
  const auto r = parse_model_spec(R"({"inputs": [{"shape": [2], "device": "cpu"}, {"shape": [2], "device": "cuda"},
                                                {"shape": [2]}], "outputs": {}})");
  ASSERT_TRUE(std::holds_alternative<ModelSpec>(r)) << std::get<std::string>(r);
  const ModelSpec& s = std::get<ModelSpec>(r);
  EXPECT_TRUE(s.inputs[0].on_host);
  EXPECT_FALSE(s.inputs[1].on_host);  // "cuda": the run's device, as when the field is absent
  EXPECT_FALSE(s.inputs[2].on_host);
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
      {R"({"inputs": [{"shape": [2], "device": "gpu"}], "outputs": {}})", "inputs[0].device"},
      {R"({"inputs": [{"shape": [2], "device": 0}], "outputs": {}})", "inputs[0].device"},
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

// A transformer-style dict output: leaves named by key, in the model's order.
std::vector<OutputTensor> dict_outputs() {
  return {{true, "Float", {2, 8}, std::vector<double>(16, 0.5), "pooled", "cuda:0"},
          {true, "Float", {2, 5, 8}, std::vector<double>(80, 0.5), "hidden", "cuda:0"},
          {false, "String", {}, {}, "version", ""}};
}

ModelSpec spec_of(const char* outputs) {
  const auto r = parse_model_spec(std::string(R"({"inputs": [{"shape": [2]}], "outputs": )") + outputs + "}");
  EXPECT_TRUE(std::holds_alternative<ModelSpec>(r)) << std::get<std::string>(r);
  return std::get<ModelSpec>(r);
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

TEST(AppContract, NamedRulesAndInputsAreParsed) {
  EXPECT_NE(std::get<std::string>(parse_model_spec(R"({"inputs": [{"shape": [2]}], "outputs": {"finite": {"a": 1}}})")).find("outputs.finite['a']"),
            std::string::npos);
  EXPECT_NE(std::get<std::string>(parse_model_spec(R"({"inputs": [{"shape": [2]}], "outputs": {"shapes": 3}})")).find("outputs.shapes"),
            std::string::npos);
  EXPECT_NE(std::get<std::string>(parse_model_spec(R"({"inputs": [{"shape": [2]}], "outputs": {"reference": {"file": "r", "output": []}}})"))
                .find("outputs.reference.output"), std::string::npos);
  // Two inputs of one name: no forward() can take them (a usage error, whatever the model).
  const auto twice = parse_model_spec(R"({"inputs": [{"name": "x", "shape": [2]}, {"name": "x", "shape": [2]}], "outputs": {}})");
  EXPECT_EQ(std::get<std::string>(twice), "inputs[1].name 'x' repeats inputs[0].name");
  const auto s = std::get<ModelSpec>(parse_model_spec(R"({"inputs": [{"name": "ids", "shape": [2]}, {"shape": [2]}], "outputs": {}})"));
  EXPECT_TRUE(s.inputs[0].named);
  EXPECT_FALSE(s.inputs[1].named);
  EXPECT_EQ(s.inputs[1].name, "input1");
  const auto p = probe_inputs(s);
  EXPECT_STREQ(p[0].name, "ids");
  EXPECT_EQ(p[1].name, nullptr);  // by position
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

// Issue 17: shapes whose product overflows int64 passed the size check (signed overflow).
TEST(AppContract, AShapeWhoseSizeOverflowsIsRefused) {
  for (const char* shape : {"[2147483648,2147483648,2147483648]", "[2147483648,2147483648,2147483648,2147483648]",
                            "[65536,65536,65536,65536,65536,65536,65536,65536]", "[4097,4096]"}) {
    const auto r = parse_model_spec(fmt::format(R"({{"inputs": [{{"shape": {}}}], "outputs": {{}}}})", shape));
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << shape;
    EXPECT_EQ(std::get<std::string>(r), "inputs[0] is larger than 16M values: this is a small input") << shape;
  }
  EXPECT_TRUE(std::holds_alternative<ModelSpec>(parse_model_spec(R"({"inputs": [{"shape": [0,2147483648,2147483648,2147483648]}], "outputs": {}})")));
  EXPECT_TRUE(std::holds_alternative<ModelSpec>(parse_model_spec(R"({"inputs": [{"shape": [4096,4096]}], "outputs": {}})")));
}

// Issue 17: a spec nested 100 000 levels deep crashed the supervisor.
TEST(AppContract, ASpecOrReferenceNestedTooDeeplyIsRefused) {
  const std::string deep = R"({"inputs": [{"shape": [2]}], "outputs": {}, "comment": )" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  const auto r = parse_model_spec(deep);
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r), "nested deeper than 32 levels (docs/limits.md): not an input spec");
  const std::string ok = R"({"inputs": [{"shape": [2]}], "outputs": {}, "comment": ")" + std::string(100, '[') + R"("})";
  EXPECT_TRUE(std::holds_alternative<ModelSpec>(parse_model_spec(ok)));  // brackets inside a string are text
  const auto ref = parse_reference(R"({"embeddings": )" + std::string(40, '[') + std::string(40, ']') + "}");
  ASSERT_TRUE(std::holds_alternative<std::string>(ref));
  EXPECT_NE(std::get<std::string>(ref).find("nested deeper"), std::string::npos);
}

// Issue 17: /dev/zero read gigabytes, a FIFO hung forever, /dev/stdin was read twice.
TEST(AppContract, OnlyRegularFilesOfBoundedSizeAreRead) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), dir.path()}) {
    const auto r = read_model_spec(path);  // returns at once: nothing blocks on the FIFO
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << path;
    EXPECT_NE(std::get<std::string>(r).find("is not a regular file"), std::string::npos) << std::get<std::string>(r);
  }
  const std::string big = dir.path() + "/big.json";
  std::ofstream(big) << std::string(limits::kMaxSpecBytes + 1, ' ');
  EXPECT_NE(std::get<std::string>(read_model_spec(big)).find("larger than the limit of 16 MiB"), std::string::npos);
  const std::string spec = dir.path() + "/spec.json";
  std::ofstream(spec) << R"({"inputs": [{"shape": [2]}], "outputs": {"reference": {"file": "fifo"}}})";
  EXPECT_NE(std::get<std::string>(read_model_spec(spec)).find("outputs.reference: '"), std::string::npos);
  std::ofstream(spec) << R"({"inputs": [{"shape": [2]}], "outputs": {"reference": {"file": "/dev/zero"}}})";
  EXPECT_NE(std::get<std::string>(read_model_spec(spec)).find("is not a regular file"), std::string::npos);
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
