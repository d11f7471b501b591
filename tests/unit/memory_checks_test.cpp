// Layer L5's judgement on recorded numbers: the size an OOM message asked for, which phase
// ran out and why, and the growth rule. The messages are LibTorch's own wording.
#include "verdict/memory_checks.h"

#include <gtest/gtest.h>

namespace kd::memory {
namespace {

constexpr uint64_t MiB = 1024 * 1024, GiB = 1024 * MiB;

// torch 2.11's caching allocator, as c10::OutOfMemoryError says it (one line).
const char* kCuda211 =
    "CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 139.10 GiB is "
    "free. Including non-PyTorch memory, this process has 706.00 MiB memory in use. 42.94 MiB allowed; Of the allocated "
    "memory 2.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.";
// LibTorch 1.13's wording.
const char* kCuda113 =
    "CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; 7.93 GiB total capacity; 130.35 MiB already allocated; "
    "47.06 MiB free; 188.00 MiB reserved in total by PyTorch)";
// LibTorch's CPU allocator.
const char* kCpu = "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1125899906842624 bytes. Error code 12";

TEST(MemoryChecks, RequestedSizeFromRealMessages) {
  EXPECT_EQ(requested_bytes(kCuda211), 64 * MiB);
  EXPECT_EQ(requested_bytes(kCuda113), 36 * MiB);
  EXPECT_EQ(requested_bytes(kCpu), uint64_t(1) << 50);
  EXPECT_EQ(requested_bytes("CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 ..."), 3 * GiB / 2);
  EXPECT_EQ(requested_bytes("CUDA out of memory. Tried to allocate 512 bytes. GPU 0"), 512u);
  EXPECT_FALSE(requested_bytes("CUDA error: out of memory").has_value());  // cudaMalloc outside the allocator
}

OomEvent h200(const char* phase, uint64_t requested, uint64_t reserved) {
  OomEvent e;
  e.phase = phase;
  e.requested = requested;
  e.device_numbers = true;
  e.device_total = uint64_t(139.8 * GiB);
  e.device_free = e.device_total - reserved - 706 * MiB;  // this process's CUDA context besides the allocator
  e.reserved = reserved;
  e.allocated = reserved;
  return e;
}

TEST(MemoryChecks, EachPhaseHasItsStageCauseAndAction) {
  OomEvent load = h200("load", 64 * MiB, 2 * MiB);
  load.fraction = 0.0003;
  const OomVerdict l = classify_oom(load);
  EXPECT_EQ(l.stage, "L5.oom.load");
  EXPECT_NE(l.message.find("loading the model ran out of memory: tried to allocate 64.0 MiB"), std::string::npos) << l.message;
  EXPECT_NE(l.message.find("--memory-fraction 0.0003"), std::string::npos) << l.message;
  EXPECT_NE(l.message.find("held outside it (CUDA contexts, this one's too, and other processes) 706.0 MiB"), std::string::npos) << l.message;
  EXPECT_NE(l.cause.find("weights do not fit"), std::string::npos);
  EXPECT_NE(l.action.find("lower precision"), std::string::npos);

  const OomVerdict f = classify_oom(h200("first_compute", 16 * MiB, 68 * MiB));
  EXPECT_EQ(f.stage, "L5.oom.first_compute");
  EXPECT_NE(f.cause.find("activations"), std::string::npos);
  EXPECT_NE(f.action.find("batch size"), std::string::npos);

  const OomVerdict i = classify_oom(h200("iterations", 2 * MiB, 110 * MiB));
  EXPECT_EQ(i.stage, "L5.oom.iterations");
  EXPECT_NE(i.cause.find("grew until it ran out"), std::string::npos);
  EXPECT_NE(i.action.find("loss.item()"), std::string::npos);
}

TEST(MemoryChecks, OtherProcessesHoldingTheDeviceAreNamedFirst) {
  OomEvent e = h200("first_compute", 2 * GiB, 1 * GiB);
  e.device_free = 1 * GiB;  // others: 139.8 - 1 - 1 GiB
  EXPECT_EQ(held_by_others(e), e.device_total - 2 * GiB);
  const OomVerdict v = classify_oom(e);
  EXPECT_EQ(v.stage, "L5.oom.first_compute");  // the phase is still named
  EXPECT_NE(v.cause.find("other processes"), std::string::npos) << v.cause;
  EXPECT_NE(v.action.find("nvidia-smi"), std::string::npos);
  e.fraction = 0.01;  // with a cap of our own, the cap is what ran out
  EXPECT_NE(classify_oom(e).cause.find("activations"), std::string::npos);
}

TEST(MemoryChecks, OnTheCpuThereAreNoDeviceNumbers) {
  OomEvent e;
  e.phase = "load";
  e.requested = requested_bytes(kCpu);
  const OomVerdict v = classify_oom(e);
  EXPECT_EQ(v.message, "loading the model ran out of host memory: tried to allocate 1048576.00 GiB");
  EXPECT_EQ(held_by_others(e), 0u);
  e.requested.reset();
  EXPECT_NE(classify_oom(e).message.find("the requested size is not in the error"), std::string::npos);
}

TEST(MemoryChecks, AFlatLoopPassesALeakIsCaughtWithItsGrowthPerIteration) {
  const std::vector<uint64_t> flat(20, 70 * MiB);
  const Growth f = judge_growth(flat, 64 * 1024);
  EXPECT_FALSE(f.beyond);
  EXPECT_EQ(f.per_iteration, 0);
  EXPECT_NE(f.message.find("within the tolerance"), std::string::npos) << f.message;

  std::vector<uint64_t> leak;
  for (uint64_t i = 0; i < 20; ++i) leak.push_back(70 * MiB + i * 1536 * 1024);  // 1.5 MiB an iteration
  const Growth g = judge_growth(leak, 64 * 1024);
  EXPECT_TRUE(g.beyond);
  EXPECT_DOUBLE_EQ(g.per_iteration, 1.5 * MiB);
  EXPECT_EQ(g.message, "allocated memory grew by 1.5 MiB per iteration over 20 iterations (70.0 MiB to 98.5 MiB), beyond "
                       "the tolerance of 64.0 KiB per iteration: tensors are kept across iterations");

  EXPECT_TRUE(judge_growth({1, 2}, 0.5).beyond);
  EXPECT_FALSE(judge_growth({5}, 0).beyond);  // nothing to compare
}

}  // namespace
}  // namespace kd::memory
