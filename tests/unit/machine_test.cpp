// The machine around the GPU (machine/): cgroups v1 and v2 from their real file layouts, the driver's files as the
// kernel writes them, the environment's variables (never a value beyond a known flag), where a scratch folder goes
// when TMPDIR is gone, and which libcuda was loaded.
#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "machine/cgroup.h"
#include "machine/environment.h"
#include "machine/host_facts.h"
#include "machine/loaded_libcuda.h"
#include "machine/memory_headroom.h"
#include "machine/temp_folder.h"
#include "temp_dir.h"

namespace kd {
namespace {

using namespace kd::machine;
using nlohmann::json;

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(Cgroup, ProcSelfCgroupAndMountinfoLines) {
  const auto lines = parse_proc_cgroup("12:pids:/job/7\n4:memory:/job/7\n1:name=systemd:/job/7\n0::/job/7\n");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1].controllers, "memory");
  EXPECT_EQ(lines[3].controllers, "");
  EXPECT_EQ(lines[3].path, "/job/7");
  const auto mounts = parse_cgroup_mounts(
      "25 1 0:23 / / rw - ext4 /dev/vda rw\n"
      "36 25 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:17 - cgroup cgroup rw,memory\n"
      "40 25 0:35 /docker/abc /sys/fs/cgroup/unified\\040x rw - cgroup2 cgroup2 rw\n");
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].type, "cgroup");
  EXPECT_EQ(mounts[0].options, "rw,memory");
  EXPECT_EQ(mounts[1].root, "/docker/abc");
  EXPECT_EQ(mounts[1].mount_point, "/sys/fs/cgroup/unified x");
}

TEST(Cgroup, LimitsAndQuotas) {
  EXPECT_EQ(parse_limit("max"), std::nullopt);
  EXPECT_EQ(parse_limit("9223372036854771712"), std::nullopt);  // v1's "no limit"
  EXPECT_EQ(parse_limit("4294967296"), 4294967296ULL);
  EXPECT_EQ(parse_cpu_max("max 100000"), std::nullopt);
  EXPECT_EQ(parse_cpu_max("150000 100000"), 1.5);
  EXPECT_EQ(cpu_quota_v1("-1", "100000"), std::nullopt);
  EXPECT_EQ(cpu_quota_v1("100000", "100000"), 1.0);
}

// A v2 container whose own limit is "max" under a parent limited to 4 GiB: the smaller on the way up counts.
TEST(Cgroup, VersionTwoTakesTheSmallestLimitUpToTheMountPoint) {
  test::TempDir d;
  const std::string root = d.file("cg");
  write(root + "/memory.max", "max\n");
  write(root + "/job/memory.max", "4294967296\n");
  write(root + "/job/cpu.max", "max 100000\n");
  write(root + "/job/pids.max", "max\n");
  write(root + "/job/step/memory.max", "max\n");
  write(root + "/job/step/memory.current", "1073741824\n");
  write(root + "/job/step/memory.stat", "anon 805306368\nfile 268435456\ninactive_file 268435456\n");
  write(root + "/job/step/cpu.max", "100000 100000\n");
  write(root + "/job/step/pids.max", "512\n");
  const Cgroup c = read_cgroup("0::/job/step\n", "40 25 0:35 / " + root + " rw - cgroup2 cgroup2 rw\n");
  EXPECT_EQ(c.version, "v2");
  EXPECT_EQ(c.memory_limit, 4294967296ULL);
  EXPECT_EQ(c.memory_used, 805306368ULL);  // less the page cache it can drop
  EXPECT_EQ(c.cpu_quota_cores, 1.0);
  EXPECT_EQ(c.pids_limit, 512);
}

// A container's cgroup namespace: /proc/self/cgroup says "/", the mount is the container's own cgroup.
TEST(Cgroup, VersionOneInsideACgroupNamespace) {
  test::TempDir d;
  write(d.file("memory/memory.limit_in_bytes"), "536870912\n");
  write(d.file("memory/memory.usage_in_bytes"), "1048576\n");
  write(d.file("cpu/cpu.cfs_quota_us"), "50000\n");
  write(d.file("cpu/cpu.cfs_period_us"), "100000\n");
  const std::string mountinfo = "36 25 0:31 /docker/abc " + d.file("memory") + " rw - cgroup cgroup rw,memory\n" +
                                "37 25 0:32 /docker/abc " + d.file("cpu") + " rw - cgroup cgroup rw,cpu,cpuacct\n";
  const Cgroup c = read_cgroup("4:memory:/\n3:cpu,cpuacct:/\n", mountinfo);
  EXPECT_EQ(c.version, "v1");
  EXPECT_EQ(c.memory_limit, 536870912ULL);
  EXPECT_EQ(c.memory_used, 1048576ULL);
  EXPECT_EQ(c.cpu_quota_cores, 0.5);
  EXPECT_EQ(c.pids_limit, std::nullopt);
  EXPECT_EQ(read_cgroup("", "").version, "");  // no cgroup file system: nothing known
}

TEST(Machine, DriverFilesAsTheKernelWritesThem) {
  EXPECT_EQ(kernel_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:42:20 UTC 2025\n"
                                   "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"),
            "580.95.05");
  EXPECT_EQ(kernel_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.172.08  Release Build"),
            "570.172.08");
  EXPECT_EQ(kernel_driver_version("something else"), std::nullopt);
  const std::string modules = "nvidia_uvm 1802240 0 - Live 0x0000000000000000 (PO)\nnvidia 11476992 2 nvidia_uvm, Live 0x0\n";
  EXPECT_TRUE(module_listed(modules, "nvidia_uvm"));
  EXPECT_TRUE(module_listed(modules, "nvidia"));
  EXPECT_FALSE(module_listed("nvidia_modeset 1 0 - Live\n", "nvidia"));
}

TEST(Machine, ContainerKindFromTheMarksRuntimesLeave) {
  EXPECT_EQ(container_kind(false, false, nullptr, nullptr, "0::/user.slice\n"), "");
  EXPECT_EQ(container_kind(true, false, nullptr, nullptr, "0::/\n"), "docker");
  EXPECT_EQ(container_kind(false, true, "podman", nullptr, "0::/\n"), "podman");
  EXPECT_EQ(container_kind(false, false, nullptr, "10.0.0.1", "0::/\n"), "kubernetes");
  EXPECT_EQ(container_kind(false, false, nullptr, nullptr, "0::/kubepods/burstable/pod1/abc\n"), "kubernetes");
  EXPECT_EQ(container_kind(false, false, "systemd-nspawn", nullptr, "0::/\n"), "other");
}

TEST(Environment, DeviceLists) {
  EXPECT_EQ(check_device_list(nullptr), DeviceList::unset);
  EXPECT_EQ(check_device_list(""), DeviceList::empty);
  EXPECT_EQ(check_device_list("0,1"), DeviceList::ok);
  EXPECT_EQ(check_device_list("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,1"), DeviceList::ok);
  EXPECT_EQ(check_device_list("MIG-GPU-8932f937/1/0"), DeviceList::ok);
  EXPECT_EQ(check_device_list("0,2,-1,1"), DeviceList::ok);  // CUDA's own example: -1 hides what follows
  EXPECT_EQ(check_device_list("0,0"), DeviceList::duplicate);
  EXPECT_EQ(check_device_list("1,01"), DeviceList::duplicate);
  EXPECT_EQ(check_device_list("all"), DeviceList::malformed);
  EXPECT_EQ(check_device_list("0;1"), DeviceList::malformed);
}

TEST(Environment, AllocatorSettingsOfLibTorch211) {
  EXPECT_EQ(check_alloc_conf("expandable_segments:True").valid, true);
  EXPECT_EQ(check_alloc_conf("max_split_size_mb:128,garbage_collection_threshold:0.6").valid, true);
  EXPECT_EQ(check_alloc_conf("roundup_power2_divisions:[256:1,512:2,>:4],backend:native").valid, true);
  EXPECT_EQ(check_alloc_conf("expandable_segments:yes").valid, false);
  EXPECT_EQ(check_alloc_conf("expandable_segments:yes").note, "expandable_segments needs True or False");
  EXPECT_EQ(check_alloc_conf("garbage_collection_threshold:1.5").valid, false);
  EXPECT_EQ(check_alloc_conf("backend:tlsf").valid, false);
  EXPECT_EQ(check_alloc_conf("just-words").valid, false);
  EXPECT_EQ(check_alloc_conf("brand_new_key:1").valid, std::nullopt);  // perhaps a newer LibTorch's: unknown
}

// Names and validity; a value only for a known flag's accepted value, never a path, a list or a typo.
TEST(Environment, NamesValidityAndOnlyKnownFlagValues) {
  const std::map<std::string, std::string> env = {{"CUDA_VISIBLE_DEVICES", "0,0"},
                                                  {"CUDA_LAUNCH_BLOCKING", "1"},
                                                  {"CUDA_DEVICE_ORDER", "secret-typo"},
                                                  {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
                                                  {"LD_LIBRARY_PATH", "/home/alice/lib"},
                                                  {"HOME", "/home/alice"}};
  const json facts = environment_facts([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  std::map<std::string, json> by_name;
  for (const json& e : facts) by_name[e["name"]] = e;
  EXPECT_EQ(by_name.size(), 5u);  // HOME changes nothing of CUDA's
  EXPECT_EQ(by_name["CUDA_VISIBLE_DEVICES"]["valid"], false);
  EXPECT_TRUE(by_name["CUDA_VISIBLE_DEVICES"]["value"].is_null());
  EXPECT_EQ(by_name["CUDA_LAUNCH_BLOCKING"]["value"], "1");
  EXPECT_EQ(by_name["CUDA_DEVICE_ORDER"]["valid"], false);
  EXPECT_TRUE(by_name["CUDA_DEVICE_ORDER"]["value"].is_null());
  EXPECT_EQ(by_name["PYTORCH_CUDA_ALLOC_CONF"]["valid"], true);
  EXPECT_TRUE(by_name["LD_LIBRARY_PATH"]["valid"].is_null());
  const std::string text = facts.dump();
  for (const char* secret : {"alice", "secret-typo", "expandable_segments:True", "0,0"})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
}

// A batch job's TMPDIR that its cleanup removed: the next usable folder, as mktemp and Python's tempfile choose it.
TEST(TempFolder, AMissingTmpdirIsPassedOverAndNamed) {
  test::TempDir d;
  const char* old = std::getenv("TMPDIR");
  const std::string kept = old ? old : "";
  ::setenv("TMPDIR", d.file("gone").c_str(), 1);
  const auto made = make_temp_folder("kd-unit-scratch-XXXXXX");
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->source, "tmp");  // the report holds no path
  EXPECT_EQ(made->skipped, std::vector<std::string>{"TMPDIR"});
  EXPECT_TRUE(std::filesystem::is_directory(made->path));
  std::filesystem::remove(made->path);
  ::setenv("TMPDIR", d.path().c_str(), 1);
  const auto here = make_temp_folder("kd-unit-scratch-XXXXXX");
  ASSERT_TRUE(here.has_value());
  EXPECT_EQ(here->source, "TMPDIR");
  EXPECT_TRUE(here->skipped.empty());
  if (old) ::setenv("TMPDIR", kept.c_str(), 1);
  else ::unsetenv("TMPDIR");
}

TEST(LoadedLibcuda, SourceAndVersionWithoutThePath) {
  EXPECT_EQ(libcuda_source("/usr/local/cuda-13.0/compat/libcuda.so.580.95.05", ""), "compat");
  EXPECT_EQ(libcuda_source("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "/opt/other"), "system");
  test::TempDir d;
  char real[PATH_MAX];
  ASSERT_TRUE(::realpath(d.path().c_str(), real));
  EXPECT_EQ(libcuda_source(std::string(real) + "/libcuda.so.1", "/x:" + d.path()), "library_path");
  EXPECT_EQ(libcuda_file_version("/usr/lib/libcuda.so.580.95.05"), "580.95.05");
  EXPECT_EQ(libcuda_file_version("/opt/stand-in/libcuda.so.1"), "");
}

TEST(MemoryHeadroom, MemAvailableOfProcMeminfo) {
  EXPECT_EQ(mem_available("MemTotal:       16318488 kB\nMemFree:  100 kB\nMemAvailable:   12000000 kB\n"),
            12000000ULL * 1024);
  EXPECT_EQ(mem_available("MemTotal: 1 kB\n"), std::nullopt);
  const auto here = available_memory_bytes();  // Linux: /proc/meminfo has it, within this process's cgroup
  ASSERT_TRUE(here);
  EXPECT_GT(*here, 0u);
}

}  // namespace
}  // namespace kd
