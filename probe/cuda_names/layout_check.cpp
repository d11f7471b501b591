// Compiled into libkd_probe.so when probe/cuda_names stands in for the toolkit's crt/ and nv/target: the types whose
// layout those names shape (__align__, __builtin_align__) have the layout CUDA gives them, so what the probe shares
// with LibTorch and the CUDA runtime is laid out as they were built with. A wrong declaration stops the build here.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

static_assert(alignof(char2) == 2 && alignof(short2) == 4 && alignof(int2) == 8 && alignof(float2) == 8, "CUDA vectors");
static_assert(alignof(int4) == 16 && alignof(float4) == 16 && alignof(double2) == 16 && alignof(longlong2) == 16,
              "CUDA vectors of 16 bytes");
static_assert(sizeof(float4) == 16 && sizeof(double2) == 16 && sizeof(dim3) == 12, "CUDA vector sizes");
static_assert(alignof(__half) == 2 && alignof(__half2) == 4 && alignof(__nv_bfloat16) == 2 && alignof(__nv_bfloat162) == 4,
              "CUDA half and bfloat16");
