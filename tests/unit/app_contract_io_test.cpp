// What L4's contract is given: the --input spec parsed (every bad field named), read from the
// user's files within their bounds, the model file looked at, the spec's inputs for the probe.
#include "fixtures/app_contract_io.h"
#include "fixtures/input_limits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "temp_dir.h"

namespace kd::app {
namespace {

using kd::test::TempDir;

const char* kSpec = R"({"inputs": [{"name": "x", "shape": [4, 8], "dtype": "float32", "range": [-1, 1]},
                                   {"name": "ids", "shape": [2], "dtype": "int64", "values": [3, 7]}],
                        "outputs": {"count": 2, "shapes": [[4, 3], [-1]], "finite": true}})";

TEST(AppContractIo, SpecParses) {
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

TEST(AppContractIo, AnInputMayStayOnTheHost) {
  const auto r = parse_model_spec(R"({"inputs": [{"shape": [2], "device": "cpu"}, {"shape": [2], "device": "cuda"},
                                                {"shape": [2]}], "outputs": {}})");
  ASSERT_TRUE(std::holds_alternative<ModelSpec>(r)) << std::get<std::string>(r);
  const ModelSpec& s = std::get<ModelSpec>(r);
  EXPECT_TRUE(s.inputs[0].on_host);
  EXPECT_FALSE(s.inputs[1].on_host);  // "cuda": the run's device, as when the field is absent
  EXPECT_FALSE(s.inputs[2].on_host);
}

TEST(AppContractIo, BadSpecsNameTheField) {
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

TEST(AppContractIo, NamedRulesAndInputsAreParsed) {
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

TEST(AppContractIo, ReferenceFileIsReadNextToTheSpec) {
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
TEST(AppContractIo, AShapeWhoseSizeOverflowsIsRefused) {
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
TEST(AppContractIo, ASpecOrReferenceNestedTooDeeplyIsRefused) {
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
TEST(AppContractIo, OnlyRegularFilesOfBoundedSizeAreRead) {
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

TEST(AppContractIo, ModelFileProblemsSayMissingOrUnreadable) {
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
