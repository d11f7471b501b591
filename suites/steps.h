// Every step of every layer: one function each, defined in its layer's file (suites/lN_*.cpp) and named in
// suites/layers.cpp's list, which says its test name, stage, prerequisites and order.
#pragma once
#include "fixtures/layer_test.h"

namespace kd {

// L1 runtime & import (suites/l1_runtime_import.cpp)
Outcome l1_runtime_facts(WorkerContext& ctx);
Outcome l1_libtorch_loads(WorkerContext& ctx);
Outcome l1_python_torch(WorkerContext& ctx);
// L2 backend & device (suites/l2_backend_device.cpp)
Outcome l2_backend_declared(WorkerContext& ctx);
Outcome l2_gpu_available(WorkerContext& ctx);
Outcome l2_device_index(WorkerContext& ctx);
Outcome l2_device_properties(WorkerContext& ctx);
Outcome l2_health(WorkerContext& ctx);
// L3 tiny op (suites/l3_tiny_op.cpp)
Outcome l3_inputs(WorkerContext& ctx);
Outcome l3_product(WorkerContext& ctx);
Outcome l3_loss(WorkerContext& ctx);
Outcome l3_gradients(WorkerContext& ctx);
Outcome l3_synchronize(WorkerContext& ctx);
// L4 application (suites/l4_app.cpp, l4_across_devices.cpp, l4_stop_resume.cpp)
Outcome l4_embeddings(WorkerContext& ctx);
Outcome l4_training_step(WorkerContext& ctx);
Outcome l4_extension_load(WorkerContext& ctx);
Outcome l4_model_load(WorkerContext& ctx);
Outcome l4_model_contract(WorkerContext& ctx);
Outcome l4_across_devices(WorkerContext& ctx);
Outcome l4_across_devices_model(WorkerContext& ctx);
Outcome l4_stop_resume(WorkerContext& ctx);
void l4_stop_resume_ahead(WorkerContext& ctx);
void l4_stop_resume_ahead_end();
// L5 memory (suites/l5_memory.cpp, l5_range.cpp)
Outcome l5_phases(WorkerContext& ctx);
Outcome l5_steps(WorkerContext& ctx);
Outcome l5_empty_cache(WorkerContext& ctx);
Outcome l5_growth(WorkerContext& ctx);
Outcome l5_operating_range(WorkerContext& ctx);
// L6 timing (suites/l6_timing.cpp)
Outcome l6_segments(WorkerContext& ctx);
Outcome l6_copy_bandwidth(WorkerContext& ctx);
Outcome l6_matmul_bf16(WorkerContext& ctx);
Outcome l6_matmul_fp32(WorkerContext& ctx);
Outcome l6_matmul_tf32(WorkerContext& ctx);
// L6 under load (suites/l6_load.cpp): the host link; --sustained's throughput and its results; --memory-integrity.
Outcome l6_host_link(WorkerContext& ctx);
Outcome l6_sustained_throughput(WorkerContext& ctx);
Outcome l6_sustained_results(WorkerContext& ctx);
Outcome l6_memory_integrity(WorkerContext& ctx);
// L7 peer (suites/l7_peer.cpp)
Outcome l7_copy(WorkerContext& ctx);
Outcome l7_bandwidth(WorkerContext& ctx);
Outcome l7_all_reduce(WorkerContext& ctx);
// L8 collective (suites/l8_collective.cpp)
Outcome l8_join(WorkerContext& ctx);
Outcome l8_all_reduce(WorkerContext& ctx);
Outcome l8_broadcast(WorkerContext& ctx);
Outcome l8_barrier(WorkerContext& ctx);
Outcome l8_bandwidth(WorkerContext& ctx);

}  // namespace kd
