// The names of the CUDA toolkit's crt/host_defines.h that the CUDA runtime headers of NVIDIA's pip packages use when
// a host compiler (g++, clang++) reads them: no GPU code is compiled here, so each means what it means on the host
// (README.md; tests/cuda_names checks them against the toolkit's own header).
#pragma once
#if defined(__CUDACC__) || !defined(__GNUC__)
#error "probe/cuda_names declares the CUDA headers' names for a GNU-style host compiler only: use the CUDA toolkit's headers"
#endif

#define __host__
#define __device__
#define __device_builtin__
#define __cudart_builtin__
#define CUDARTAPI
#undef __forceinline__
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(a) __align__(a)
