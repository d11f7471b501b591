#include <c10/cuda/CUDAFunctions.h>

#include "bench/device_sync.h"

void kd_bench::synchronize() { c10::cuda::device_synchronize(); }
