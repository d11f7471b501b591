// L3 tiny op: the fixed 2x2 float32 computation of docs/contract.md on the target device,
// compared exactly on the host (every value is exact in float32), then a synchronize.
#include <cstdlib>

#include <fmt/format.h>

#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"

namespace kd {
namespace {

using Mat = std::array<float, 4>;
constexpr Mat kProduct = {3, 1, 7, 3};
constexpr float kLoss = 196;
constexpr Mat kGradA = {56, 28, 56, 28};
constexpr Mat kGradB = {112, 112, 168, 168};

std::string show(const float* m) { return fmt::format("[[{},{}],[{},{}]]", m[0], m[1], m[2], m[3]); }

bool equal(const float* got, const Mat& want) {
  for (int i = 0; i < 4; ++i)
    if (got[i] != want[i]) return false;
  return true;
}

}  // namespace


// Needs the device properties, not only the index: any run that computes on a GPU (a layer alone too) then
// records which device it was (name, capability, arch check) in its report.
Outcome l3_inputs(WorkerContext& ctx) {
  const std::string device = ctx.cpu_mode() ? "cpu" : fmt::format("cuda:{}", ctx.device_index());
  ctx.fact(report::execution_device, device);
  const kd_status s = ctx.probe->tiny_inputs(!ctx.cpu_mode(), ctx.device_index(), ctx.probe_fault());
  return s.kind == KD_OK ? Outcome::pass() : backend_failure(s);
}

Outcome l3_product(WorkerContext& ctx) {
  if (ctx.fault("abort")) std::abort();  // test-only: the worker dies mid-run
  float p[4];
  const kd_status s = ctx.probe->tiny_product(p);
  if (s.kind != KD_OK) return backend_failure(s);
  const bool ok = equal(p, kProduct);
  ctx.fact(report::execution_product_verified, ok);
  if (!ok) return Outcome::fail(Code::CheckFailed, fmt::format("a @ b = {}, expected {}", show(p), show(kProduct.data())));
  return Outcome::pass();
}

Outcome l3_loss(WorkerContext& ctx) {
  float loss = 0;
  const kd_status s = ctx.probe->tiny_loss(&loss);
  if (s.kind != KD_OK) return backend_failure(s);
  ctx.fact(report::execution_loss, loss);
  if (loss != kLoss) return Outcome::fail(Code::CheckFailed, fmt::format("loss = (sum p)^2 = {}, expected {}", loss, kLoss));
  return Outcome::pass();
}

Outcome l3_gradients(WorkerContext& ctx) {
  float ga[4], gb[4];
  const kd_status s = ctx.probe->tiny_backward(ga, gb);
  if (s.kind != KD_OK) return backend_failure(s);
  const bool ok = equal(ga, kGradA) && equal(gb, kGradB);
  ctx.fact(report::execution_gradient_verified, ok);
  if (!ok)
    return Outcome::fail(Code::CheckFailed, fmt::format("grad_a = {}, grad_b = {}, expected {} and {}", show(ga), show(gb),
                                                        show(kGradA.data()), show(kGradB.data())));
  return Outcome::pass();
}

Outcome l3_synchronize(WorkerContext& ctx) {
  // CPU work is already complete when it returns; the test-only hang still runs here.
  if (ctx.cpu_mode() && !ctx.fault("hang")) return Outcome::not_applicable("CPU work is synchronous: nothing to synchronize");
  const kd_status s = ctx.probe->tiny_synchronize();
  return s.kind == KD_OK ? Outcome::pass() : backend_failure(s);
}

}  // namespace kd
