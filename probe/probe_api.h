// The one door between the suite and LibTorch: a plain C ABI, so the executable never
// links LibTorch and never shares C++ types with it (its libstdc++ ABI may differ).
// The worker dlopen()s libkd_probe.so and asks for this table.
#pragma once
#include <stdint.h>

#define KD_PROBE_ABI_VERSION 2
#define KD_PROBE_ENTRY "kd_probe_get_v1"

#ifdef __cplusplus
extern "C" {
#endif

enum kd_status_kind { KD_OK = 0, KD_ERR_OUT_OF_MEMORY = 1, KD_ERR_RUNTIME = 2, KD_ERR_UNSUPPORTED = 3 };

// Test-only fault injection, chosen with --inject-fault and recorded in the report.
enum kd_fault { KD_FAULT_NONE = 0, KD_FAULT_WRONG_PRODUCT, KD_FAULT_HANG, KD_FAULT_OUT_OF_MEMORY, KD_FAULT_RUNTIME_ERROR };

typedef struct kd_status {
  int kind;            // kd_status_kind
  char message[1024];  // first line of the error, without LibTorch's backtrace (not yet redacted)
} kd_status;

typedef struct kd_torch_info {
  char version[64];        // e.g. "2.11.0"
  char cuda_compiled[32];  // e.g. "13.0", "" when the build has no CUDA
  char hip_compiled[32];   // e.g. "6.4", "" when the build has no HIP
  char backend[16];        // "cuda", "rocm" or "none": what the build declares
  char source[32];         // how the build found LibTorch (python, debian, private, prefix)
  char arch_list[512];     // compiled GPU architectures, comma-separated ("sm_90,compute_90"); "" if unknown
} kd_torch_info;

typedef struct kd_gpu_state {
  int available;           // 1 when at least one device can be used from this process
  int device_count;        // visible devices
  char reason[1024];       // the runtime's reason when unavailable
} kd_gpu_state;

typedef struct kd_device_props {
  char name[256];
  int major, minor;
  uint64_t total_memory_bytes;
  int multiprocessors;
} kd_device_props;

typedef struct kd_probe_v1 {
  int abi_version;
  kd_status (*torch_info)(kd_torch_info* out);
  kd_status (*gpu_state)(kd_gpu_state* out);                 // only when backend != none
  kd_status (*device_props)(int index, kd_device_props* out);
  // The fixed tiny computation, one step a call so that each step has its own stage.
  kd_status (*tiny_inputs)(int on_gpu, int index, int fault);  // a, b on the device, requiring grad
  kd_status (*tiny_product)(float out[4]);
  kd_status (*tiny_loss)(float* out);
  kd_status (*tiny_backward)(float grad_a[4], float grad_b[4]);
  kd_status (*tiny_synchronize)(void);
} kd_probe_v1;

typedef const kd_probe_v1* (*kd_probe_entry_fn)(void);

#ifdef __cplusplus
}
#endif
