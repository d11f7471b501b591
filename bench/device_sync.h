#pragma once
namespace kd_bench {
void synchronize();  // device_sync_cuda.cpp, or a no-op without CUDA
}
