// The all-reduce step where LibTorch has its NCCL process group (chosen in probe/CMakeLists.txt:
// a CUDA LibTorch whose libtorch_cuda defines c10d::ProcessGroupNCCL, and nccl.h found). One
// process, one thread per GPU, each thread a rank of a ProcessGroupNCCL sharing one HashStore:
// rank r contributes r + 1 in every element, so every element must read 1 + 2 + ... + n after
// the sum, compared on each GPU. The whole LibTorch ATen header set comes with it: this file
// alone pays for it.
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device_ops.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

constexpr int64_t kElements = int64_t(16) << 20;  // 64 MiB of float32 per GPU

struct RankResult {
  kd_status status{};
  int64_t wrong = 0;
  double first_wrong = 0;
};

}  // namespace

kd_status all_reduce(const int* gpus, int devices, kd_all_reduce_out* out) {
  return guarded([&] {
    *out = kd_all_reduce_out{};
    if (devices < 2) throw std::invalid_argument("all_reduce: needs two or more GPUs");
    const auto store = c10::make_intrusive<c10d::HashStore>();
    const double expected = devices * (devices + 1) / 2.0;
    std::vector<RankResult> results(static_cast<size_t>(devices));
    std::vector<c10::intrusive_ptr<c10d::ProcessGroupNCCL>> groups(static_cast<size_t>(devices));
    auto rank_main = [&](int rank) {
      RankResult& r = results[static_cast<size_t>(rank)];
      r.status = guarded([&] {
        const auto index = static_cast<c10::DeviceIndex>(gpus[rank]);
        c10::cuda::CUDAGuard guard(index);
        const at::Device d(at::kCUDA, index);
        auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, devices);
        groups[static_cast<size_t>(rank)] = pg;
        std::vector<at::Tensor> t = {at::full({kElements}, rank + 1.0, at::TensorOptions().dtype(at::kFloat).device(d))};
        pg->allreduce(t)->wait();
        c10::cuda::device_synchronize();
        const at::Tensor wrong = at::ne(t[0], expected);
        r.wrong = wrong.sum().item<int64_t>();
        if (r.wrong) r.first_wrong = t[0][at::nonzero(wrong)[0][0].item<int64_t>()].item<double>();
      });
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int rank = 0; rank < devices; ++rank) threads.emplace_back(rank_main, rank);
    for (auto& t : threads) t.join();
    out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto& pg : groups) {
      try {
        if (pg) pg->shutdown();  // NCCL communicators and the watchdog threads go before the store
      } catch (const std::exception&) {
        // A teardown error says nothing about the sum, which is already checked.
      }
    }
    out->ranks = devices;
    out->elements = kElements;
    out->expected = expected;
    out->wrong_rank = -1;
    for (int rank = 0; rank < devices; ++rank) {
      const RankResult& r = results[static_cast<size_t>(rank)];
      if (r.status.kind != KD_OK) throw std::runtime_error("rank " + std::to_string(rank) + ": " + r.status.message);
      if (r.wrong && out->wrong_rank < 0) {
        out->wrong_rank = rank;
        out->first_wrong = r.first_wrong;
      }
    }
    out->verified = out->wrong_rank < 0;
    copy_to(out->desc, sizeof out->desc,
            "ProcessGroupNCCL sum over " + std::to_string(devices) +
                " GPUs (one thread per rank, a shared HashStore), 64 MiB float32 per GPU; the time includes NCCL's setup");
  });
}

}  // namespace kd::probe
