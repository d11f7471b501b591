// The user's model split by rows (fixtures/batch_rows.h): which inputs have a batch to split, and how the
// outputs come back row by row.
#include "fixtures/batch_rows.h"

#include <gtest/gtest.h>

namespace kd::app {
namespace {

InputSpec input(const char* name, std::vector<int64_t> shape) {
  InputSpec in;
  in.name = name;
  in.shape = std::move(shape);
  return in;
}

OutputTensor tensor(const char* name, std::vector<int64_t> shape, std::vector<double> data) {
  OutputTensor o;
  o.name = name;
  o.shape = std::move(shape);
  o.data = std::move(data);
  return o;
}

TEST(BatchRows, EveryInputSharesTheBatch) {
  ModelSpec spec;
  spec.inputs = {input("ids", {4, 5}), input("mask", {4, 5})};
  EXPECT_EQ(std::get<int64_t>(input_batch(spec)), 4);
  spec.inputs[1].shape = {2, 5};
  EXPECT_EQ(std::get<std::string>(input_batch(spec)),
            "the inputs' first dimensions differ ('ids': 4, 'mask': 2): no batch to split by rows");
  spec.inputs = {input("x", {1, 8})};
  EXPECT_EQ(std::get<std::string>(input_batch(spec)), "a batch of 1 row: nothing to split");
  spec.inputs = {input("s", {})};
  EXPECT_EQ(std::get<std::string>(input_batch(spec)), "input 's' is a scalar: it has no rows to split");
  EXPECT_EQ(std::get<std::string>(input_batch(ModelSpec{})), "the model takes no input");
}

TEST(BatchRows, OutputsComeBackRowByRowInOutputOrder) {
  OutputTensor count;
  count.is_tensor = false;  // a non-tensor leaf has no rows: left out
  const auto rows = output_rows({tensor("logits", {2, 3}, {1, 2, 3, 4, 5, 6}), count, tensor("score", {2}, {7, 8})}, 2);
  EXPECT_EQ(std::get<std::vector<std::vector<double>>>(rows), (std::vector<std::vector<double>>{{1, 2, 3, 7}, {4, 5, 6, 8}}));
  EXPECT_EQ(std::get<std::string>(output_rows({tensor("loss", {}, {0.5})}, 2)),
            "output 'loss' ([]) has no first dimension of the batch's 2 rows: its rows cannot be gathered");
  EXPECT_EQ(std::get<std::string>(output_rows({tensor("pooled", {3, 8}, std::vector<double>(24))}, 2)),
            "output 'pooled' ([3,8]) has no first dimension of the batch's 2 rows: its rows cannot be gathered");
}

}  // namespace
}  // namespace kd::app
