#include "suites/layers.h"

#include <algorithm>

#include "suites/steps.h"

// Compiled into both programs: kernodeck-diagnostic-full (KD_FULL_PROGRAM) holds L4-L8's steps, kernodeck-diagnostic
// only knows them (their names, stages and order; no code), so that its listings and filters are the same.
#ifdef KD_FULL_PROGRAM
#define IN_FULL(fn) &fn
#else
#define IN_FULL(fn) nullptr
#endif

namespace kd {

const LayerList& layers() {
  static const LayerList list = {
      {1, "L1", "L1_RuntimeImport", "runtime & import", true, {
          {"RuntimeFacts", "L1.runtime", {}, &l1_runtime_facts},
          {"LibTorchLoads", "L1.import", {"L1.runtime"}, &l1_libtorch_loads},
          {"PythonTorch", "L1.python", {}, &l1_python_torch},
      }},
      {2, "L2", "L2_BackendDevice", "backend & device", true, {
          {"BackendDeclared", "L2.backend", {"L1.import"}, &l2_backend_declared},
          {"GpuAvailable", "L2.gpu_available", {"L2.backend"}, &l2_gpu_available},
          {"DeviceIndex", "L2.device_index", {"L2.gpu_available"}, &l2_device_index},
          {"DeviceProperties", "L2.device_properties", {"L2.device_index"}, &l2_device_properties},
          {"Health", "L2.health", {"L2.device_properties"}, &l2_health},
      }},
      {3, "L3", "L3_TinyOp", "tiny op", true, {
          {"Inputs", "L3.inputs", {"L2.device_properties"}, &l3_inputs},
          {"Product", "L3.product", {"L3.inputs"}, &l3_product},
          {"Loss", "L3.loss", {"L3.product"}, &l3_loss},
          {"Gradients", "L3.gradients", {"L3.loss"}, &l3_gradients},
          {"Synchronize", "L3.synchronize", {"L3.gradients"}, &l3_synchronize},
      }},
      {4, "L4", "L4_App", "application", false, {
          {"Embeddings", "L4.embeddings", {"L3.synchronize"}, IN_FULL(l4_embeddings)},
          {"TrainingStep", "L4.training", {"L3.synchronize"}, IN_FULL(l4_training_step)},
          {"ExtensionLoad", "L4.extension_load", {"L3.synchronize"}, IN_FULL(l4_extension_load)},
          {"ModelLoad", "L4.model_load", {"L3.synchronize", "L4.extension_load"}, IN_FULL(l4_model_load)},
          {"ModelContract", "L4.model_run", {"L4.model_load"}, IN_FULL(l4_model_contract)},
          {"AcrossDevices", "L4.across_devices", {"L4.embeddings"}, IN_FULL(l4_across_devices)},
          {"AcrossDevicesModel", "L4.across_devices_model", {"L4.model_run"}, IN_FULL(l4_across_devices_model)},
          {"StopResume", "L4.stop_resume", {"L3.synchronize"}, IN_FULL(l4_stop_resume),
           {IN_FULL(l4_stop_resume_ahead), IN_FULL(l4_stop_resume_ahead_end)}},
      }},
      {5, "L5", "L5_Memory", "memory", false, {
          {"Phases", "L5.phases", {"L3.synchronize"}, IN_FULL(l5_phases)},
          {"Steps", "L5.steps", {"L5.phases"}, IN_FULL(l5_steps)},
          {"EmptyCache", "L5.empty_cache", {"L5.phases"}, IN_FULL(l5_empty_cache)},
          {"Growth", "L5.growth", {"L5.phases"}, IN_FULL(l5_growth)},
          {"OperatingRange", "L5.range", {"L3.synchronize"}, IN_FULL(l5_operating_range)},
      }},
      {6, "L6", "L6_Timing", "timing", false, {
          {"Segments", "L6.segments", {"L3.synchronize"}, IN_FULL(l6_segments)},
          {"CopyBandwidth", "L6.copy_bandwidth", {"L3.synchronize"}, IN_FULL(l6_copy_bandwidth)},
          {"MatmulBf16", "L6.matmul_bf16", {"L3.synchronize"}, IN_FULL(l6_matmul_bf16)},
          {"MatmulFp32", "L6.matmul_fp32", {"L3.synchronize"}, IN_FULL(l6_matmul_fp32)},
          {"MatmulTf32", "L6.matmul_tf32", {"L3.synchronize"}, IN_FULL(l6_matmul_tf32)},
          {"HostLink", "L6.host_link", {"L3.synchronize"}, IN_FULL(l6_host_link)},
          {"SustainedThroughput", "L6.sustained_throughput", {"L3.synchronize"}, IN_FULL(l6_sustained_throughput)},
          {"SustainedResults", "L6.sustained_results", {"L3.synchronize"}, IN_FULL(l6_sustained_results)},
          {"MemoryIntegrity", "L6.memory_integrity", {"L3.synchronize"}, IN_FULL(l6_memory_integrity)},
      }},
      {7, "L7", "L7_Peer", "peer", false, {
          {"Copy", "L7.copy", {"L2.gpu_available"}, IN_FULL(l7_copy)},
          {"Bandwidth", "L7.bandwidth", {"L7.copy"}, IN_FULL(l7_bandwidth)},
          {"AllReduce", "L7.all_reduce", {"L7.copy"}, IN_FULL(l7_all_reduce)},
      }},
      {8, "L8", "L8_Collective", "collective", false, {
          {"Join", "L8.join", {"L2.gpu_available"}, IN_FULL(l8_join)},
          {"AllReduce", "L8.all_reduce", {"L8.join"}, IN_FULL(l8_all_reduce)},
          {"Broadcast", "L8.broadcast", {"L8.all_reduce"}, IN_FULL(l8_broadcast)},
          {"Barrier", "L8.barrier", {"L8.broadcast"}, IN_FULL(l8_barrier)},
          {"Bandwidth", "L8.bandwidth", {"L8.barrier"}, IN_FULL(l8_bandwidth)},
      }},
  };
  return list;
}

bool holds_every_layer() {
  return std::all_of(layers().begin(), layers().end(), [](const LayerDef& l) {
    return std::all_of(l.steps.begin(), l.steps.end(), [](const StepDef& s) { return s.fn != nullptr; });
  });
}

}  // namespace kd
