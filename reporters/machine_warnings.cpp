#include "machine_warnings.h"

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "verdict/signatures.h"

namespace kd {
namespace {

using nlohmann::json;
using report::read;

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kMemlockForInfiniband = 1ULL << 30;  // NCCL registers its buffers; its docs ask for unlimited
constexpr uint64_t kProcessHeadroom = 2ULL << 30;       // a LibTorch process with CUDA takes about 1 GiB of host memory

std::optional<uint64_t> soft_limit(const json& host, const char* key) {
  const json& limits = read(host, report::host_limits);
  return limits.is_object() ? read(limits.value(key, json()), report::limit_soft) : std::nullopt;
}

}  // namespace

std::vector<std::string> machine_warnings(const json& host, bool gpu_run) {
  std::vector<std::string> out;
  if (const auto shm = read(read(host, report::host_shm), report::shm_size_bytes); shm && *shm < kSmallShmBytes)
    out.push_back(fmt::format("the shared-memory folder (dev/shm) is {} MiB: DataLoader workers and NCCL's shared-memory "
                              "transport fail (\"Bus error\", \"unhandled system error\") once it is full; give it room "
                              "(docker run --shm-size=8g or --ipc=host)",
                              *shm / kMiB));
  if (const auto files = soft_limit(host, "open_files"); files && *files < kLowOpenFiles)
    out.push_back(fmt::format("the open-files limit (ulimit -n) is {}: CUDA, NCCL and DataLoader workers need more "
                              "descriptors; raise it (ulimit -n 4096)",
                              *files));
  if (const auto as = soft_limit(host, "address_space_bytes"); as && gpu_run)
    out.push_back(fmt::format("an address-space limit (ulimit -v) of {} MiB is set: CUDA reserves more virtual memory "
                              "than the GPU's and the host's memory together and fails to start under such a limit",
                              *as / kMiB));
  const auto memlock = soft_limit(host, "locked_memory_bytes");
  if (read(host, report::host_infiniband_devices).value_or(0) > 0 && memlock && *memlock < kMemlockForInfiniband)
    out.push_back(fmt::format("the locked-memory limit (ulimit -l) is {} KiB on a machine with InfiniBand: NCCL over "
                              "InfiniBand registers its buffers and fails (\"ibv_reg_mr failed\") under a low limit; set "
                              "it unlimited (ulimit -l unlimited, the job's or container's memlock setting)",
                              *memlock / 1024));
  const json& c = read(host, report::host_container);
  const auto limit = read(c, report::cgroup_memory_limit_bytes);
  const uint64_t used = read(c, report::cgroup_memory_used_bytes).value_or(0);
  if (limit && (*limit < used || *limit - used < kProcessHeadroom))
    out.push_back(fmt::format("the cgroup's memory limit ({} MiB) leaves {} MiB free: a LibTorch process with CUDA "
                              "takes about 1 GiB of host memory, and one that passes the limit is killed",
                              *limit / kMiB, (*limit > used ? *limit - used : 0) / kMiB));
  const auto quota = read(c, report::cgroup_cpu_quota_cores);
  const auto cpus = read(c, report::process_cpus);
  if ((quota && *quota <= 1.0) || cpus == 1)
    out.push_back("this process may use one CPU (its cgroup's CPU quota or its affinity): LibTorch's threads and "
                  "DataLoader workers share it, so data loading and CPU work will be slow");
  const json& temp = read(host, report::host_temp);
  if (const auto skipped = read(temp, report::temp_skipped); skipped && !skipped->empty()) {
    out.push_back(fmt::format("{} names a folder where nothing can be created (missing, or not writable): the run's "
                              "scratch folder went to the next usable one (host.temp.folder: {}); other programs that "
                              "rely on {} would fail here",
                              fmt::join(*skipped, " and "), read(temp, report::temp_folder).value_or("?"), skipped->front()));
  }
  for (const json& e : read(host, report::host_environment)) {
    const std::string name = read(e, report::env_name).value_or("?");
    if (name == "CUDA_LAUNCH_BLOCKING" && read(e, report::env_value) == "1" && gpu_run)
      out.push_back("CUDA_LAUNCH_BLOCKING=1 is set: every kernel launch waits for the GPU, so all GPU work is much "
                    "slower (a debugging setting left on)");
    if (read(e, report::env_valid) == false)
      out.push_back(fmt::format("{}: {}", name, read(e, report::env_note).value_or("a value it does not accept")));
  }
  return out;
}

}  // namespace kd
