// An extension built for another LibTorch, in miniature: it needs a c10 function that no LibTorch
// defines, so the loader refuses it ("undefined symbol", RTLD_NOW) before it registers anything.
#include <ATen/ops/mul.h>
#include <torch/library.h>

namespace c10::detail {
int kd_symbol_of_another_libtorch(int);  // declared, defined nowhere
}  // namespace c10::detail

namespace {
at::Tensor twice(const at::Tensor& x) { return at::mul(x, c10::detail::kd_symbol_of_another_libtorch(2)); }
}  // namespace

TORCH_LIBRARY(kd_test_broken, m) { m.def("twice(Tensor x) -> Tensor", &twice); }
