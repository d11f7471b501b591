// LibTorch's own build description (at::show_config()) tells CUDA, ROCm and CPU-only
// builds apart; these texts are what real builds print.
#include "probe/build_settings.h"

#include <gtest/gtest.h>

namespace kd {
namespace {

// torch 2.11.0 from pip (CUDA 13.0), abridged to the part that is read.
const char* kCudaBuild =
    "PyTorch built with:\n  - GCC 13.3\n  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, CUDA_VERSION=13.0, "
    "CUDNN_VERSION=9.19.0, TORCH_VERSION=2.11.0, USE_CUDA=ON, USE_CUDNN=ON, USE_ROCM=OFF, "
    "USE_ROCM_KERNEL_ASSERT=OFF, USE_XPU=OFF, \n";

// Debian's libtorch 1.13.1 (CPU only).
const char* kCpuBuild =
    "PyTorch built with:\n  - GCC 12.2\n  - CPU capability usage: AVX2\n  - Build settings: BLAS_INFO=open, "
    "BUILD_TYPE=Release, CXX_FLAGS= -fvisibility-inlines-hidden -DUSE_PTHREADPOOL -O2, TORCH_VERSION=1.13.0, "
    "USE_CUDA=OFF, USE_CUDNN=OFF, USE_MKLDNN=OFF, USE_ROCM=OFF, \n";

const char* kRocmBuild =
    "PyTorch built with:\n  - GCC 11.2\n  - HIP Runtime 6.4.43482\n  - MIOpen 3.4.0\n  - Build settings: "
    "BLAS_INFO=open, BUILD_TYPE=Release, ROCM_VERSION=6.4.1, TORCH_VERSION=2.8.0, USE_CUDA=OFF, USE_CUDNN=OFF, "
    "USE_ROCM=ON, USE_ROCM_KERNEL_ASSERT=OFF, \n";

TEST(BuildSettings, CudaBuild) {
  const BuildSettings s = parse_build_settings(kCudaBuild);
  EXPECT_EQ(s.torch_version, "2.11.0");
  EXPECT_TRUE(s.use_cuda);
  EXPECT_FALSE(s.use_rocm) << "USE_ROCM_KERNEL_ASSERT is not USE_ROCM";
  EXPECT_EQ(s.cuda_version, "13.0");
  EXPECT_EQ(s.hip_version, "");
  EXPECT_EQ(s.backend(), "cuda");
}

TEST(BuildSettings, CpuOnlyBuild) {
  const BuildSettings s = parse_build_settings(kCpuBuild);
  EXPECT_EQ(s.torch_version, "1.13.0");
  EXPECT_FALSE(s.use_cuda);
  EXPECT_FALSE(s.use_rocm);
  EXPECT_EQ(s.cuda_version, "");
  EXPECT_EQ(s.hip_version, "");
  EXPECT_EQ(s.backend(), "none");
}

TEST(BuildSettings, RocmBuildIsAGpuBackendWithItsOwnVersion) {
  const BuildSettings s = parse_build_settings(kRocmBuild);
  EXPECT_EQ(s.torch_version, "2.8.0");
  EXPECT_TRUE(s.use_rocm);
  EXPECT_FALSE(s.use_cuda);
  EXPECT_EQ(s.hip_version, "6.4.1");
  EXPECT_EQ(s.cuda_version, "");
  EXPECT_EQ(s.backend(), "rocm");
}

TEST(BuildSettings, ReadsOnlyWholeKeys) {
  // A longer key before the real one, and a compiler define, are not the setting.
  const BuildSettings s = parse_build_settings(
      "Build settings: CXX_FLAGS= -DUSE_ROCM=1 -DUSE_CUDA=1, USE_ROCM_KERNEL_ASSERT=ON, USE_ROCM=OFF, USE_CUDA=OFF, \n");
  EXPECT_FALSE(s.use_rocm);
  EXPECT_FALSE(s.use_cuda);
  EXPECT_EQ(s.backend(), "none");
}

TEST(BuildSettings, EmptyTextDeclaresNoBackend) {
  const BuildSettings s = parse_build_settings("");
  EXPECT_EQ(s.torch_version, "");
  EXPECT_EQ(s.backend(), "none");
}

}  // namespace
}  // namespace kd

namespace kd {
namespace {

// The line as LibTorch 2.11.0+cu130 prints it on an H200 once CUDA is up (DESIGN.md), shortened.
const char* kArchLine =
    "  - NVCC architecture flags: -gencode;arch=compute_75,code=sm_75;-gencode;arch=compute_80,code=sm_80;"
    "-gencode;arch=compute_90,code=sm_90;-gencode;arch=compute_120,code=[sm_120,compute_120]\n";

TEST(ArchList, ReadsMachineCodeAndPtxInOrder) {
  EXPECT_EQ(parse_build_settings(kArchLine).arch_list,
            (std::vector<std::string>{"sm_75", "sm_80", "sm_90", "sm_120", "compute_120"}));
  EXPECT_TRUE(parse_build_settings("USE_CUDA=ON, CUDA_VERSION=13.0").arch_list.empty());
}

TEST(ArchList, CoversExactMachineCodeOrOlderPtx) {
  const auto list = parse_build_settings(kArchLine).arch_list;
  EXPECT_EQ(arch_covers(list, 9, 0), true);    // H200: sm_90
  EXPECT_EQ(arch_covers(list, 8, 6), false);   // sm_86: no machine code, and the only PTX is newer
  EXPECT_EQ(arch_covers(list, 12, 1), true);   // sm_121: PTX compute_120 compiles for it
  EXPECT_EQ(arch_covers({"sm_90a"}, 9, 0), true);
  EXPECT_EQ(arch_covers({"sm_80", "compute_80"}, 9, 0), true);
  EXPECT_EQ(arch_covers({}, 9, 0), std::nullopt);
}

}  // namespace
}  // namespace kd
