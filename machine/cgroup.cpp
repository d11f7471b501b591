#include "cgroup.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "read_text.h"

namespace kd::machine {
namespace {

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

bool has_option(const std::string& options, const std::string& name) {
  for (const std::string& o : split_on(options, ','))
    if (o == name) return true;
  return false;
}

// mountinfo escapes blanks in paths as octal ("\040").
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The smallest limit on the way from `folder` up to `top` (the mount point), each read by `read`.
template <class T, class Read>
std::optional<T> smallest_up(std::string folder, const std::string& top, Read read) {
  std::optional<T> least;
  for (;;) {
    if (const std::optional<T> v = read(folder); v && (!least || *v < *least)) least = v;
    const size_t slash = folder.rfind('/');
    if (folder.size() <= top.size() || slash == std::string::npos) break;
    folder = folder.substr(0, slash);
  }
  return least;
}

// The memory in use as `docker stats` counts it: the charge less the page cache the kernel can drop at once
// (inactive_file; v1's hierarchical total_inactive_file).
std::optional<uint64_t> memory_in_use(const std::string& folder, const char* usage_file, const char* inactive_key) {
  const std::optional<std::string> usage = read_line(folder + "/" + usage_file);
  std::optional<uint64_t> used = usage ? parse_limit(*usage) : std::nullopt;
  if (!used) return used;
  std::istringstream stat(read_text(folder + "/memory.stat").value_or(""));
  std::string key;
  uint64_t value = 0;
  while (stat >> key >> value)
    if (key == inactive_key) return *used > value ? *used - value : 0;
  return used;
}

std::optional<uint64_t> limit_file(const std::string& path) {
  const std::optional<std::string> line = read_line(path);
  return line ? parse_limit(*line) : std::nullopt;
}

}  // namespace

std::vector<CgroupLine> parse_proc_cgroup(const std::string& text) {
  std::vector<CgroupLine> out;
  for (const std::string& line : split_on(text, '\n')) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    out.push_back({line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

std::vector<CgroupMount> parse_cgroup_mounts(const std::string& mountinfo) {
  std::vector<CgroupMount> out;
  for (const std::string& line : split_on(mountinfo, '\n')) {
    // "36 25 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:17 - cgroup cgroup rw,memory"
    std::istringstream in(line);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || dash + 1 == f.end()) continue;
    const std::string type = *(dash + 1);
    if (type != "cgroup" && type != "cgroup2") continue;
    out.push_back({unescape(f[3]), unescape(f[4]), type, dash + 3 < f.end() ? *(dash + 3) : ""});
  }
  return out;
}

std::optional<std::string> cgroup_folder(const std::vector<CgroupLine>& lines, const std::vector<CgroupMount>& mounts,
                                         const std::string& controller) {
  const bool v2 = controller.empty();
  for (const CgroupLine& l : lines) {
    if (v2 ? !l.controllers.empty() : !has_option(l.controllers, controller)) continue;
    for (const CgroupMount& m : mounts) {
      if (v2 ? m.type != "cgroup2" : m.type != "cgroup" || !has_option(m.options, controller)) continue;
      // The path is from the hierarchy's root; the mount may show a part of it only (a container's own cgroup,
      // mounted as its /sys/fs/cgroup): what lies below the mount's root is the folder under the mount point.
      const std::string root = m.root == "/" ? "" : m.root;
      if (l.path.rfind(root, 0) == 0 && (l.path.size() == root.size() || l.path[root.size()] == '/'))
        return m.mount_point + (l.path == "/" ? "" : l.path.substr(root.size()));
      return m.mount_point;  // a cgroup namespace: the mount is this process's own cgroup
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_limit(const std::string& text) {
  if (text.empty() || text == "max" || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (v >= (1ULL << 62)) return std::nullopt;  // v1's "no limit": LONG_MAX rounded down to a page
  return v;
}

std::optional<double> parse_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota, period;
  in >> quota >> period;
  if (quota == "max" || period.empty()) return std::nullopt;
  return cpu_quota_v1(quota, period);
}

std::optional<double> cpu_quota_v1(const std::string& quota, const std::string& period) {
  const double q = std::atof(quota.c_str()), p = std::atof(period.c_str());
  if (!(q > 0) || !(p > 0)) return std::nullopt;
  return q / p;
}

Cgroup read_cgroup(const std::string& proc_cgroup, const std::string& mountinfo) {
  const std::vector<CgroupLine> lines = parse_proc_cgroup(proc_cgroup);
  const std::vector<CgroupMount> mounts = parse_cgroup_mounts(mountinfo);
  Cgroup c;
  const auto folder = [&](const char* controller) { return cgroup_folder(lines, mounts, controller); };
  const auto top = [&](const char* controller) {  // the mount point the folder is under
    const std::optional<std::string> f = folder(controller);
    for (const CgroupMount& m : mounts)
      if (f && f->rfind(m.mount_point, 0) == 0) return m.mount_point;
    return std::string();
  };
  if (const auto memory = folder("memory")) {
    c.version = "v1";
    c.memory_limit = smallest_up<uint64_t>(*memory, top("memory"),
                                           [](const std::string& d) { return limit_file(d + "/memory.limit_in_bytes"); });
    c.memory_used = memory_in_use(*memory, "memory.usage_in_bytes", "total_inactive_file");
    if (const auto cpu = folder("cpu"))
      c.cpu_quota_cores = smallest_up<double>(*cpu, top("cpu"), [](const std::string& d) -> std::optional<double> {
        const auto q = read_line(d + "/cpu.cfs_quota_us"), p = read_line(d + "/cpu.cfs_period_us");
        return q && p ? cpu_quota_v1(*q, *p) : std::nullopt;
      });
    if (const auto pids = folder("pids"))
      if (const auto n = smallest_up<uint64_t>(*pids, top("pids"), [](const std::string& d) { return limit_file(d + "/pids.max"); }))
        c.pids_limit = static_cast<int64_t>(*n);
    return c;
  }
  const std::optional<std::string> unified = folder("");
  if (!unified) return c;
  c.version = "v2";
  const std::string t = top("");
  c.memory_limit = smallest_up<uint64_t>(*unified, t, [](const std::string& d) { return limit_file(d + "/memory.max"); });
  c.memory_used = memory_in_use(*unified, "memory.current", "inactive_file");
  c.cpu_quota_cores = smallest_up<double>(*unified, t, [](const std::string& d) -> std::optional<double> {
    const auto line = read_line(d + "/cpu.max");
    return line ? parse_cpu_max(*line) : std::nullopt;
  });
  if (const auto n = smallest_up<uint64_t>(*unified, t, [](const std::string& d) { return limit_file(d + "/pids.max"); }))
    c.pids_limit = static_cast<int64_t>(*n);
  return c;
}

Cgroup read_own_cgroup() {
  return read_cgroup(read_text("/proc/self/cgroup").value_or(""), read_text("/proc/self/mountinfo").value_or(""));
}

}  // namespace kd::machine
