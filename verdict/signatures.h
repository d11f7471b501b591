// The catalogue of known failures (docs/signatures.md): each a signature with a stable id, what it matches (the
// error's code and words, and the facts of the build, the device and the machine around it that must agree), the
// likely cause and the next action. The first row that matches gives the report's error.signature, error.cause and
// error.next_action; when the facts contradict every row, nothing: no cause is better than a wrong one. Pure: each
// row is tested on the real error text (tests/unit/signatures_test.cpp), and docs/signatures.md has a row for each id.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actions.h"
#include "codes.h"
#include "memory_checks.h"

namespace kd {

// Whether an error message says a phrase (the signatures match by phrase).
inline bool mentions(const std::string& text, const char* needle) { return text.find(needle) != std::string::npos; }

// The machine around the GPU as the report's host says it (docs/machine.md); nothing where it is unknown.
struct MachineFacts {
  std::optional<std::string> compute_mode;  // the run's GPU's: CUDA's, else NVML's when every GPU has the same
  std::optional<uint64_t> open_files;       // soft limits; nothing when unlimited (or unknown)
  std::optional<uint64_t> address_space;
  bool in_container = false;
  std::optional<std::string> kernel_driver;  // /proc/driver/nvidia/version's; nothing: no NVIDIA kernel driver loaded
  std::optional<bool> uvm_loaded;            // /proc/modules lists nvidia_uvm
  int device_nodes = 0;                      // /dev/nvidia*
  int inaccessible_nodes = 0;                // of them, those this user may not read and write
  bool uvm_node = false;                     // /dev/nvidia-uvm
  bool nvswitch_nodes = false;               // /dev/nvidia-nvswitch*: an NVSwitch system
  bool compat_on_path = false;               // a forward-compatibility libcuda on LD_LIBRARY_PATH
  std::string libcuda_source;                // the loaded libcuda's: "system", "library_path", "compat", "" unknown
  std::optional<std::string> fabric_state;   // NVML: the least advanced of the GPUs' fabric states (NVSwitch systems)
  bool mig_enabled = false;                  // NVML: MIG mode on some GPU
  std::string visible_devices = "unset";     // CUDA_VISIBLE_DEVICES: unset, empty, ok, duplicate, malformed
  std::vector<std::string> alloc_conf_set;   // PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF: those set
  std::optional<uint64_t> shm_size;          // /dev/shm's size
};

// What a failure is judged on: where it happened, and the facts around it.
struct SignatureFacts {
  std::string cuda_compiled;            // the build's CUDA version, "" when unknown
  std::string driver_version;           // the NVIDIA driver's (nvidia-smi, else NVML, else the kernel module's)
  std::string device_capability;        // "9.0", "" when unknown
  std::vector<std::string> arch_list;   // the build's compiled architectures
  std::optional<bool> arch_supported;   // L2's prediction for the device
  std::string stage;                    // where it failed
  std::optional<memory::OomEvent> oom;  // L5's record of an out-of-memory: the phase and the numbers
  std::vector<std::string> unusable_xids;  // the kernel log's events that leave the run's GPU unusable until a reset
  std::optional<Action> xid_action;        // the most severe of their actions (verdict/xid_catalogue.h)
  MachineFacts machine;
};

struct Diagnosis {
  std::string id;  // the signature's stable id (docs/signatures.md)
  std::string cause;
  std::string action;  // the next action, for a person
  Action kind;         // the report's error.action: one word for automation (verdict/actions.h)
};

std::optional<Diagnosis> diagnose(Code code, const std::string& message, const SignatureFacts& facts);

// Every signature's id, in the catalogue's order.
std::vector<std::string> signature_ids();
// Every signature's id with the actions it may give (one word, or those its rule chooses among), in order.
std::vector<std::pair<std::string, std::vector<Action>>> signature_actions();

// Thresholds the signatures and the warnings share (verdict/machine_warnings.h).
inline constexpr uint64_t kLowOpenFiles = 256;          // CUDA, NCCL and a DataLoader open many descriptors
inline constexpr uint64_t kSmallShmBytes = 1ULL << 30;  // Docker's default is 64 MiB

}  // namespace kd
