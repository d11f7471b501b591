// This process's cgroup (a container's, a batch job's): its memory limit and use, CPU quota and pids limit, read
// from /proc/self/cgroup, /proc/self/mountinfo and the cgroup files, v1 and v2 alike. A limit set on a folder above
// this process's counts too (the smallest on the way up to the mount point). Torch-free: the probe's range sweep
// reads the memory limit through memory_headroom.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kd::machine {

// One line of /proc/self/cgroup ("4:memory:/job/1"): its controllers ("memory", "" for v2's "0::/x") and path.
struct CgroupLine {
  std::string controllers, path;
};
std::vector<CgroupLine> parse_proc_cgroup(const std::string& text);

// A cgroup file system of /proc/self/mountinfo: where the hierarchy's root (`root`) is mounted, its type
// ("cgroup" or "cgroup2") and, for v1, its controllers among the super options ("rw,memory").
struct CgroupMount {
  std::string root, mount_point, type, options;
};
std::vector<CgroupMount> parse_cgroup_mounts(const std::string& mountinfo);

// The folder of this process's cgroup for a v1 controller ("memory", "cpu", "pids"), or the v2 one ("").
std::optional<std::string> cgroup_folder(const std::vector<CgroupLine>& lines, const std::vector<CgroupMount>& mounts,
                                         const std::string& controller);

// "max" or v1's "unlimited" (a number near 2^63) is no limit.
std::optional<uint64_t> parse_limit(const std::string& text);
// cpu.max ("150000 100000": 1.5 cores; "max 100000": none), or v1's quota and period in microseconds (-1: none).
std::optional<double> parse_cpu_max(const std::string& text);
std::optional<double> cpu_quota_v1(const std::string& quota, const std::string& period);

struct Cgroup {
  std::string version;  // "v2", "v1" (also a hybrid machine's: its controllers are v1's), "" when none is mounted
  std::optional<uint64_t> memory_limit, memory_used;  // used: less the page cache it can drop (inactive_file)
  std::optional<double> cpu_quota_cores;
  std::optional<int64_t> pids_limit;
};

// From the texts of /proc/self/cgroup and /proc/self/mountinfo; the files are read where the mounts say.
Cgroup read_cgroup(const std::string& proc_cgroup, const std::string& mountinfo);
Cgroup read_own_cgroup();  // this process's

}  // namespace kd::machine
