// The one door between the suite and LibTorch: a plain C ABI, so the executable never
// links LibTorch and never shares C++ types with it (its libstdc++ ABI may differ).
// The worker dlopen()s libkd_probe.so and asks for this table.
#pragma once
#include <stdint.h>

#define KD_PROBE_ABI_VERSION 17 // 3: layer L4 (application workloads, the user's model); 4: step markers; 5: L6 timing;
                                // 6: L5 memory; 7: the peer layer L7; 8: the model's format (AOTInductor packages);
                                // 9: extension libraries (--extension), an input kept on the host; named model outputs and inputs,
                                //    forward()'s signature; the operating range's
                                //    concurrency axis (range_concurrent)
                                // 10: the device's PCI address (L2's health test matches it to NVML's GPUs)
                                // 11: the collective layer L8 (one rank of a job's process group); L7's all-reduce
                                //     over a list of GPUs; a model input's rows (the user's model split over GPUs)
                                // 12: the heavy part in a library of its own (heavy_part), loaded when first needed
                                // 13: the device's compute mode (the supervisor waits for a GPU not in the default mode to be free)
                                // 14: KD_ERR_INCOMPLETE (the heavy part not built, or from another build)
                                // 15: a shared GPU: the device's memory now (memory_counters), the copy ceiling's size
                                // 16: L6 under load: host_link, sustained, memory_integrity
                                // 17: several GPUs' host links at once (host_links_together)
// The one exported symbol: it returns the table. Its name never changes; the table's abi_version says which
// layout it is (KD_PROBE_ABI_VERSION), and a probe of another version is refused when it is loaded.
#define KD_PROBE_ENTRY "kd_probe_get"

#ifdef __cplusplus
extern "C" {
#endif

enum kd_status_kind {
  KD_OK = 0, KD_ERR_OUT_OF_MEMORY = 1, KD_ERR_RUNTIME = 2, KD_ERR_UNSUPPORTED = 3,
  KD_ERR_MODEL_FORMAT = 4,  // the file was read but is not a loadable model
  KD_ERR_MODEL_DEVICE = 5,  // an AOTInductor package compiled for another device type (the message names it)
  KD_ERR_LIBRARY = 6,       // dlopen refused a library: the message is dlerror()'s text (not yet redacted)
  KD_ERR_UNREACHABLE = 7,   // L8: a rank did not join in time, or the transport between ranks failed
  KD_ERR_INCOMPLETE = 8     // a part of the probe is not built or is from another build: the suite's gap (code 19)
};

// Test-only fault injection, chosen with --inject-fault and recorded in the report.
enum kd_fault { KD_FAULT_NONE = 0, KD_FAULT_WRONG_PRODUCT, KD_FAULT_HANG, KD_FAULT_OUT_OF_MEMORY, KD_FAULT_RUNTIME_ERROR,
                KD_FAULT_RANGE_LEAK };  // L5: a tensor kept alive past the first out-of-memory's recovery

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
  int pci_domain, pci_bus, pci_device;  // the device's PCI address (matched to NVML's GPUs)
  int compute_mode;                     // cudaComputeMode: 0 default, 1 exclusive (thread), 2 prohibited, 3 exclusive process
} kd_device_props;

// L4 embeddings: the suite chooses the inputs (ids, lengths); the probe generates tokens
// and weights from a fixed seed, runs the small model and returns every vector.
#define KD_APP_MAX_ITEMS 16
#define KD_APP_MAX_DIM 64
typedef struct kd_app_embed_in {
  int on_gpu, index;
  int count;                        // inputs
  int64_t ids[KD_APP_MAX_ITEMS];    // their ids
  int lengths[KD_APP_MAX_ITEMS];    // their lengths in tokens (1..max_length)
  int batch_size, rebatch_size;     // the run, and a second run with another batch size
} kd_app_embed_in;

typedef struct kd_app_embed_out {
  int count, dim;                    // vectors returned, their dimension
  int64_t ids[KD_APP_MAX_ITEMS];     // the input id of each vector, in output order
  float device[KD_APP_MAX_ITEMS * KD_APP_MAX_DIM];     // on the target device, by output order
  float reference[KD_APP_MAX_ITEMS * KD_APP_MAX_DIM];  // the same inputs on the CPU, by output order
  float rebatched[KD_APP_MAX_ITEMS * KD_APP_MAX_DIM];  // target device, other batch size, by output order
  int eval_mode, inference_mode;     // as observed during the compute
  char input_desc[256];              // shapes, dtypes, devices: never data
  char output_desc[256];
} kd_app_embed_out;

// L4 training step: one SGD step on a small model with a frozen layer and dropout.
typedef struct kd_app_train_out {
  float loss;
  int trainable_total, trainable_changed;  // parameter tensors
  int frozen_total, frozen_changed;
  int eval_without_dropout;   // two evaluation passes agree (dropout off in eval mode)
  int train_mode_restored;    // after the evaluation pass the module is in train mode again
  int state_identical;        // saved to a file, loaded back: every tensor bit-identical
  uint64_t state_bytes;
  char desc[256];
} kd_app_train_out;

// The user's model: its format as the suite read it from the file, inputs as the suite parsed them from --input.
enum kd_model_format { KD_MODEL_TORCHSCRIPT = 0, KD_MODEL_AOTI = 1 };
enum kd_dtype { KD_FLOAT32 = 0, KD_FLOAT16, KD_BFLOAT16, KD_FLOAT64, KD_INT64, KD_INT32, KD_BOOL };
#define KD_MAX_RANK 8
typedef struct kd_model_input {
  int dtype;                         // kd_dtype
  int rank;
  int64_t shape[KD_MAX_RANK];
  double low, high;                  // uniform values in [low, high] (integers: inclusive), fixed seed
  const double* values;              // or exactly these values (row-major), when not null
  int64_t value_count;
  int on_host;                       // 1: the input stays on the CPU whatever the run's device (ABI 9)
  const char* name;                  // passed by keyword under this name when not null (ABI 9)
  const int64_t* rows;               // when not null: only these rows of dimension 0, taken after the whole input is
  int64_t row_count;                 // made (so a shard gets the very rows of the whole run) (ABI 11)
} kd_model_input;

// --extension: a custom-operator library loaded as torch.ops.load_library does, and what it registered.
#define KD_EXTENSION_MAX_OPS 64
typedef struct kd_extension_out {
  int operator_count;                     // operators the dispatcher knows now and did not before (all of them)
  char operators[KD_EXTENSION_MAX_OPS][128];  // the first of them: "ns::name" or "ns::name.overload"
  int cxx11_abi;                          // this LibTorch's _GLIBCXX_USE_CXX11_ABI, to explain an undefined symbol
} kd_extension_out;

// Called once per output leaf, in output order: tuples, lists and dicts (nested too) are flattened, each
// leaf named by its path ("0", "pooled", "0.logits"); rank -1 for a leaf that is not a tensor, dtype then
// its kind ("Int", "String"); device: where the model left it ("" when not a tensor).
typedef void (*kd_output_sink)(void* user, const char* name, int rank, const int64_t* shape, const char* dtype,
                               const char* device, const double* data, int64_t count);

// Called when a step of the model run has *finished* ("prepare_data", "transfer", "compute").
typedef void (*kd_marker_sink)(void* user, const char* step);

// L6: the L4 embeddings workload timed in three segments, run 0 cold, then warm runs (ms).
#define KD_TIMING_MAX_RUNS 64
typedef struct kd_timing_out {
  int runs;
  double load_ms;                             // the model built on the device, before run 0
  double prepare_ms[KD_TIMING_MAX_RUNS];      // token and mask tensors built on the host
  double compute_ms[KD_TIMING_MAX_RUNS];      // transfer + forward, host clock, synchronized at both edges
  double compute_event_ms[KD_TIMING_MAX_RUNS];  // the same region by CUDA events; -1 on the CPU
  double write_ms[KD_TIMING_MAX_RUNS];        // copied back to the host and serialised
  char desc[256];
} kd_timing_out;

// L6 device ceilings, GPU only: each repeat timed by CUDA events, after warm-up, on random data.
enum kd_ceiling_kind { KD_CEILING_COPY = 0, KD_CEILING_MATMUL_BF16, KD_CEILING_MATMUL_FP32, KD_CEILING_MATMUL_TF32 };
#define KD_CEILING_MAX_REPEATS 32
typedef struct kd_ceiling_out {
  int repeats;
  double seconds[KD_CEILING_MAX_REPEATS];
  double work;  // per repeat: bytes read plus written (copy), or floating-point operations (2 n^3)
  char desc[256];
} kd_ceiling_out;

// L5: the caching allocator's counters for one device, and the device's free/total (cudaMemGetInfo).
typedef struct kd_memory_counters {
  uint64_t allocated, reserved, peak_allocated, device_free, device_total;
} kd_memory_counters;

// L5's workload: the L4 embeddings model with a larger token table, run with gradients on
// through named steps. Each phase's peak_allocated is the peak since the previous step.
enum kd_memory_step { KD_MEM_BASELINE = 0, KD_MEM_LOAD, KD_MEM_FIRST_COMPUTE, KD_MEM_ITERATIONS, KD_MEM_EMPTY_CACHE, KD_MEM_STEPS };
#define KD_MEMORY_MAX_ITERATIONS 64
typedef struct kd_memory_in {
  kd_app_embed_in input;  // the inputs (ids, lengths) and the batch size
  int64_t vocab;          // rows of the token table: the weights are vocab x 32 float32
  int iterations;         // computes after the first one
  int leak;               // test-only: keep each iteration's loss tensor (and so its graph) in a history
  double fraction;        // > 0: cap the caching allocator at this fraction of the device during the workload
} kd_memory_in;

typedef struct kd_memory_out {
  int counters;                                 // 1: allocator counters were read (GPU); 0: CPU, none exist
  int steps_done;                               // named steps finished (kd_memory_step)
  kd_memory_counters at[KD_MEM_STEPS];          // after each named step
  int iterations_done;
  uint64_t iteration_allocated[KD_MEMORY_MAX_ITERATIONS];  // allocated after each iteration
  uint64_t weights_bytes, activation_bytes;     // the table; one [batch, length, 32] float32 activation
  int failed_step;                              // the step that failed (kd_memory_step), -1 if none
  kd_memory_counters at_failure;                // read right after the failure (GPU)
  int referenced_intact;                        // after emptyCache the model computes the first vectors exactly
  char desc[256];
} kd_memory_out;

// L5 operating range: one point of the sweep. The L4 embeddings workload with its input set
// repeated to `batch` sequences of up to `max_length` tokens (one of the two is the axis).
#define KD_RANGE_MAX_WARM 16
enum kd_range_result { KD_RANGE_PASSED = 0, KD_RANGE_OUT_OF_MEMORY, KD_RANGE_OVER_BUDGET, KD_RANGE_OVER_HOST_MEMORY };
typedef struct kd_range_in {
  kd_app_embed_in set;       // the L4 input set that grows (its device, ids and lengths; batch sizes unused)
  int64_t batch, max_length;
  int warm_runs;             // after one cold run, 1..KD_RANGE_MAX_WARM
  double budget_ms;          // what is left of the sweep's time: the point stops after the run that passes it
  double host_fraction;      // CPU: a point whose estimated size passes this share of MemAvailable is not run
  int fault;                 // kd_fault: only KD_FAULT_RANGE_LEAK acts here
} kd_range_in;

typedef struct kd_range_point {
  int result;                       // kd_range_result
  int warm;                         // warm runs completed
  double cold_ms;                   // synchronized at both edges, like every run
  double warm_ms[KD_RANGE_MAX_WARM];
  int counters;                     // 1 on a GPU: the allocator counters below are filled
  kd_memory_counters baseline;      // before the point (the model in place)
  kd_memory_counters at_peak;       // after the last run, before anything is released (peak_allocated: the point's)
  kd_memory_counters at_oom;        // right after the failure: the point's tensors gone, the cache not yet emptied
  kd_memory_counters after;         // after the release and emptyCache: allocated must be back at baseline
  uint64_t requested_bytes;         // the failed allocation, from the allocator's message (0 if it does not say)
  uint64_t estimated_bytes;         // the workload's own estimate of the point's peak (CPU guard)
  char message[256];                // the out-of-memory message's first line
} kd_range_point;

// L5 operating range, concurrency axis: `executions` copies of the fixed L4 workload at once in
// this process, one host thread each (on a GPU each on its own stream from the pool), sharing one
// model. Every run of every execution is timed on its own (synchronized on its stream).
#define KD_RANGE_MAX_EXECUTIONS 256
#define KD_RANGE_MAX_LATENCIES (KD_RANGE_MAX_EXECUTIONS * (KD_RANGE_MAX_WARM + 1))
typedef struct kd_range_concurrent_out {
  kd_range_point point;             // result, counters and message as for range_point; warm/warm_ms unused
  int runs;                         // warm runs completed, all executions together
  double latency_ms[KD_RANGE_MAX_LATENCIES];
  double wall_ms;                   // from the first execution's start to the last one's end (warm runs only)
} kd_range_concurrent_out;

// L7 peer layer, GPU only: a copy from one GPU to another. The source holds a known pattern
// (0, 1, 2, ... as int32); the destination is compared with the same pattern built on the
// destination itself, so a wrong byte is found on the device without trusting the copy.
#define KD_PEER_MAX_REPEATS 32
typedef struct kd_peer_copy_out {
  int peer_access;         // cudaDeviceCanAccessPeer(src, dst); without it the copy goes through the host
  int64_t bytes;
  int64_t mismatches;      // elements that differ from the pattern
  int64_t first_bad;       // the first such element's index, -1 when none
  int64_t first_bad_value; // what it held
  int repeats;             // timed copies (0 when only verified)
  double seconds[KD_PEER_MAX_REPEATS];  // each by its own pair of CUDA events, after a warm-up
  char desc[256];
} kd_peer_copy_out;

// L7 all-reduce across all visible GPUs through LibTorch's NCCL process group.
typedef struct kd_all_reduce_out {
  int ranks;              // one per GPU, each in its own thread
  int64_t elements;       // per rank
  int verified;           // every rank holds the expected sum in every element
  double expected, first_wrong;  // the sum every element must hold; a value that differed (when not verified)
  int wrong_rank;         // the first rank holding a wrong value, -1 when none
  double seconds;         // the all-reduce, host clock, synchronized at both edges
  char desc[256];
} kd_all_reduce_out;

// L8 collective (ABI 11): this process is one rank of a job. Rank 0 serves a c10d TCPStore at host:port,
// every rank joins it and waits for all the others, then the ranks form one process group:
// ProcessGroupNCCL on a GPU, ProcessGroupGloo on the CPU. The steps below run in that group.
#define KD_COLLECTIVE_MAX_MISSING 64
#define KD_COLLECTIVE_MAX_SIZES 8
typedef struct kd_collective_in {
  char host[256];           // rank 0's address, as the job's environment gives it (never reported)
  int port;
  int world_size, rank;
  int on_gpu, index;        // the device of this rank's tensors
  double join_timeout_s;    // how long this rank waits for every other rank to join
  double op_timeout_s;      // from the join's start, the time by which every later operation must have ended
                            // (each waits at most what is left of it, so a rank always ends within --timeout)
  int wrong_contribution;   // test-only: this rank adds 1 to one element of its all-reduce contribution
} kd_collective_in;

typedef struct kd_collective_join_out {
  int joined;               // ranks seen in the store when the wait ended (this one included)
  int store_unreachable;    // 1: rank 0's store never answered (then nothing is known of the others)
  int missing_count;        // ranks absent at the limit
  int missing[KD_COLLECTIVE_MAX_MISSING];  // the first of them, ascending
  double seconds;           // the wait for every rank, then the group's set-up
  char backend[16];         // "gloo" or "nccl"
  char desc[256];
} kd_collective_join_out;

// A verified collective: every element compared with the value it must hold on this rank.
typedef struct kd_collective_check_out {
  int64_t elements, wrong;  // compared, and how many differ
  int64_t first_wrong;      // the first differing element's index, -1 when none
  double expected, got;     // at that element
  double seconds;
  int missing_count;        // when the operation failed: ranks that never reached it (from the store)
  int missing[KD_COLLECTIVE_MAX_MISSING];
  char desc[256];
} kd_collective_check_out;

typedef struct kd_collective_bandwidth_out {
  int sizes;
  int64_t bytes[KD_COLLECTIVE_MAX_SIZES];
  int iterations[KD_COLLECTIVE_MAX_SIZES];     // timed all-reduces of that size, after a warm-up
  double seconds[KD_COLLECTIVE_MAX_SIZES];     // their mean, host clock, synchronized at both edges
  char desc[256];
} kd_collective_bandwidth_out;

// L6 under load (ABI 16). The host link: `repeats` copies of `bytes` from host memory (pinned or pageable) to the
// device, then as many back, each timed by the host clock with the device synchronized at both edges, after one
// warm-up each way. On the CPU (on_gpu 0) copies between two host buffers: the CPU has no link, the figures are a
// stand-in's.
#define KD_HOST_LINK_MAX_REPEATS 32
#define KD_HOST_LINKS_MAX 64  // devices at once (host_links_together)
typedef struct kd_host_link_out {
  int repeats;
  double to_device_s[KD_HOST_LINK_MAX_REPEATS];
  double to_host_s[KD_HOST_LINK_MAX_REPEATS];
  char desc[256];
} kd_host_link_out;

// The sustained load: n x n matrix products back to back for `seconds` (bf16 on a GPU, float32 on the CPU), in
// batches of about `point_seconds`, each ended by a synchronization: one point of the curve. Every product is compared
// bitwise with the first one's result on the device (a count of differing elements and the largest difference per
// product, read at each point), and rows of it with a float64 CPU reference at the start and at the end.
#define KD_SUSTAINED_MAX_POINTS 512
typedef struct kd_sustained_in {
  int on_gpu, index;
  double seconds, point_seconds;
  int64_t n;
  int64_t corrupt_iteration;  // TEST ONLY: this product's result has one bit flipped (-1: none)
} kd_sustained_in;

typedef struct kd_sustained_out {
  int points;
  double t_s[KD_SUSTAINED_MAX_POINTS];       // each point's end, from the load's start
  int64_t products[KD_SUSTAINED_MAX_POINTS]; // products finished in that point
  int64_t total_products;
  double flops_per_product;                   // 2 n^3
  int64_t bad_products;                       // products whose result differed from the first's
  int64_t first_bad_product, first_bad_elements;  // the first of them (its iteration, from 0), how many elements
  double first_bad_max_diff;                  // and the largest absolute difference in it
  int reference_checks;                       // 0..2: start, end
  int64_t reference_rows;
  int64_t reference_bad[2];                   // elements of the rows outside the tolerance
  double reference_max_diff[2], reference_tolerance;
  char desc[256];
} kd_sustained_out;
// Called at the end of each point (host side, between batches): the suite samples NVML there.
typedef void (*kd_point_sink)(void* user, double t_s, int64_t products);

// Memory integrity: int64 patterns written to and read back from `bytes` of device memory in chunks of `chunk_bytes`
// (the last may be shorter), allocated through the caching allocator, so only memory that was free is touched.
// Patterns: 0 address-in-address (each word holds its own index), 1 walking ones (1 << index % 64), 2 seeded
// pseudo-random (a hash of the index and the seed).
#define KD_INTEGRITY_PATTERNS 3
typedef struct kd_integrity_in {
  int on_gpu, index;
  int64_t bytes, chunk_bytes;
  int64_t seed;
  int corrupt_chunk;  // TEST ONLY: one word of this chunk has a bit flipped after the first pattern is written (-1: none)
} kd_integrity_in;

typedef struct kd_integrity_out {
  int64_t chunks, bytes_tested;
  double pattern_seconds[KD_INTEGRITY_PATTERNS];  // each pattern written and verified over every chunk
  int64_t mismatches;                             // words that read back wrong, every pattern
  int64_t bad_chunks;
  int first_bad_pattern;                          // -1 when none
  int64_t first_bad_chunk, first_bad_chunk_offset;  // its index and its offset in the tested region (bytes)
  int64_t first_bad_chunk_mismatches;
  int64_t first_bad_word_offset;                  // of the first wrong word in that chunk (bytes from the chunk's start)
  uint64_t first_bad_address;                     // the device address of that word
  char desc[256];
} kd_integrity_out;

typedef struct kd_probe_table {
  int abi_version;  // KD_PROBE_ABI_VERSION of the build that made it
  kd_status (*torch_info)(kd_torch_info* out);
  kd_status (*gpu_state)(kd_gpu_state* out);                 // only when backend != none
  kd_status (*device_props)(int index, kd_device_props* out);
  // The fixed tiny computation, one step a call so that each step has its own stage.
  kd_status (*tiny_inputs)(int on_gpu, int index, int fault);  // a, b on the device, requiring grad
  kd_status (*tiny_product)(float out[4]);
  kd_status (*tiny_loss)(float* out);
  kd_status (*tiny_backward)(float grad_a[4], float grad_b[4]);
  kd_status (*tiny_synchronize)(void);
  // L4 (ABI 3).
  kd_status (*app_embeddings)(const kd_app_embed_in* in, kd_app_embed_out* out);
  kd_status (*app_training)(int on_gpu, int index, const char* folder, kd_app_train_out* out);
  kd_status (*model_load)(const char* path, int format, int on_gpu, int index, char* desc,
                          int desc_cap);  // format: kd_model_format; see probe_aoti.h for its errors
  kd_status (*model_run)(const kd_model_input* inputs, int count, kd_output_sink sink, kd_marker_sink marker,
                         void* user, char* desc, int desc_cap);
  // L6 (ABI 5).
  kd_status (*timing_segments)(const kd_app_embed_in* in, int runs, kd_timing_out* out);
  // copy_bytes: the copy's size each way (0: 1 GiB), from the memory free for it (ABI 15); the products' is fixed.
  kd_status (*ceiling)(int index, int kind, int64_t copy_bytes, kd_ceiling_out* out);  // CPU-only builds: KD_ERR_UNSUPPORTED
  // L5 (ABI 6).
  // step(user, name) is called as each named step starts ("load", "first_compute", "iterations", "empty_cache").
  kd_status (*memory_workload)(const kd_memory_in* in, kd_memory_out* out, kd_marker_sink step, void* user);
  // L5 operating range (ABI 6).
  kd_status (*range_memory_fraction)(int index, double fraction);  // caps the caching allocator; CPU-only builds: unsupported
  kd_status (*range_point)(const kd_range_in* in, kd_range_point* out);  // an out-of-memory is a result, not an error
  // Peer layer (ABI 7). CPU-only builds: KD_ERR_UNSUPPORTED.
  // Copies `bytes` from GPU src to GPU dst, verifies, then (repeats > 0) times that many more copies.
  kd_status (*peer_copy)(int src, int dst, int64_t bytes, int repeats, int fault, kd_peer_copy_out* out);
  // KD_ERR_UNSUPPORTED (with the reason) when this LibTorch has no NCCL process group.
  kd_status (*all_reduce)(const int* devices, int count, kd_all_reduce_out* out);  // rank r on GPU devices[r] (ABI 11)
  // --extension (ABI 9): dlopen(RTLD_NOW | RTLD_GLOBAL), then the operators it registered. KD_ERR_LIBRARY when
  // the loader refuses it; KD_ERR_RUNTIME when its registration throws (e.g. an operator defined twice).
  kd_status (*extension_load)(const char* path, kd_extension_out* out);
  // The loaded model's forward() parameters (ABI 9), self left out: one line each, "NAME\tTYPE\tDEFAULT"
  // (DEFAULT 1 when it has a default value). KD_ERR_UNSUPPORTED when the format has no signature (AOTInductor).
  kd_status (*model_signature)(char* out, int cap);
  // L5 operating range, concurrency axis (ABI 9): in's batch and max_length per execution.
  kd_status (*range_concurrent)(const kd_range_in* in, int executions, kd_range_concurrent_out* out);
  // L8 collective (ABI 11), in this order; KD_ERR_UNREACHABLE names what was waited for, KD_ERR_UNSUPPORTED
  // when this LibTorch has no process group for the device. The group lives until collective_end.
  kd_status (*collective_join)(const kd_collective_in* in, kd_collective_join_out* out);
  kd_status (*collective_all_reduce)(kd_collective_check_out* out);  // each rank's rank-dependent values, summed
  kd_status (*collective_broadcast)(kd_collective_check_out* out);   // rank 0's values to every rank
  kd_status (*collective_barrier)(kd_collective_check_out* out);     // only seconds and missing are filled
  // All-reduces of float32 tensors of each size in bytes, each size for at most seconds_per_size.
  kd_status (*collective_bandwidth)(const int64_t* bytes, int count, double seconds_per_size,
                                    kd_collective_bandwidth_out* out);
  kd_status (*collective_end)(void);  // every rank done (bounded wait), then the group and the store go
  // Loads libkd_probe_heavy.so now (ABI 12), which holds L4's, L7's and L8's entries above and is otherwise
  // loaded at their first call: KD_ERR_LIBRARY says why it cannot (not built, or refused by the loader).
  kd_status (*heavy_part)(void);
  // The caching allocator's counters and the device's free and total memory now, nothing run (ABI 15): what a
  // measuring step sizes itself from on a GPU others may share. CPU-only builds: KD_ERR_UNSUPPORTED.
  kd_status (*memory_counters)(int index, kd_memory_counters* out);
  // L6 under load (ABI 16); pinned: page-locked host memory (GPU only).
  kd_status (*host_link)(int on_gpu, int index, int64_t bytes, int pinned, int repeats, kd_host_link_out* out);
  kd_status (*sustained)(const kd_sustained_in* in, kd_sustained_out* out, kd_point_sink point, void* user);
  // An allocation that fails ends the pass with the chunks it has (chunks, bytes_tested say how many).
  kd_status (*memory_integrity)(const kd_integrity_in* in, kd_integrity_out* out);
  // Several devices' host links at once (ABI 17): one thread a device, each its own copies as host_link makes them,
  // every repeat of every device started together, so that GPUs behind one PCIe switch or root port share it as a
  // job's ranks do; outs[i] is indices[i]'s. count 1: that device alone, timed the same way. On the CPU (on_gpu 0,
  // test only) each index is a thread copying within host memory.
  kd_status (*host_links_together)(int on_gpu, const int* indices, int count, int64_t bytes, int pinned, int repeats,
                                   kd_host_link_out* outs);
} kd_probe_table;

typedef const kd_probe_table* (*kd_probe_entry_fn)(void);

#ifdef __cplusplus
}
#endif
