// The CUDA toolkit's crt/host_config.h configures nvcc's host compiler; for a host compiler alone it declares
// nothing (README.md).
#pragma once
#if defined(__CUDACC__) || !defined(__GNUC__)
#error "probe/cuda_names declares the CUDA headers' names for a GNU-style host compiler only: use the CUDA toolkit's headers"
#endif
