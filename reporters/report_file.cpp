#include "report_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

namespace kd {
namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

constexpr size_t kTempNameExtra = 11;  // "." + NAME + ".kd-XXXXXX"

}  // namespace

std::optional<std::string> same_output_paths(const std::vector<std::pair<std::string, std::string>>& outputs) {
  auto normal = [](std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    std::error_code ec;
    const auto abs = std::filesystem::absolute(p, ec);
    const auto real = std::filesystem::weakly_canonical(abs, ec);  // existing folders resolved
    return (ec ? abs.lexically_normal() : real).string();
  };
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (normal(outputs[i].second) == normal(outputs[j].second))
        return fmt::format("{} and {} name the same path '{}': give each its own new name", outputs[i].first,
                           outputs[j].first, outputs[j].second);
  return std::nullopt;
}

std::optional<std::string> check_new_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0)
    return fmt::format("'{}' already exists{}; the report never replaces a file", path,
                       S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
  if (base_of(path).empty()) return fmt::format("'{}' names a folder, not a file", path);
  const std::string folder = folder_of(path);
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fmt::format("the folder '{}' does not exist", folder);
  if (::access(folder.c_str(), W_OK | X_OK) != 0) return fmt::format("the folder '{}' is not writable", folder);
  // The file is written as ".NAME.kd-XXXXXX" first: that name must fit the file system's limit too.
  const long name_max = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  if (name_max > 0 && base_of(path).size() + kTempNameExtra > static_cast<size_t>(name_max))
    return fmt::format("the name '{}...' is longer than this file system allows ({} bytes, less {} for the temporary name)",
                       base_of(path).substr(0, 32), name_max, kTempNameExtra);
  if (path.size() + kTempNameExtra >= PATH_MAX) return fmt::format("the path is longer than {} bytes", PATH_MAX);
  return std::nullopt;
}

std::optional<std::string> write_new_file(const std::string& path, const std::string& content) {
  if (auto why = check_new_file(path)) return why;
  std::string tmp = fmt::format("{}/.{}.kd-XXXXXX", folder_of(path), base_of(path));
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return fmt::format("cannot create a file in '{}': {}", folder_of(path), std::strerror(errno));
  tmp = name.data();
  ::fchmod(fd, 0644);
  auto fail = [&](const std::string& what) -> std::optional<std::string> {
    const std::string msg = fmt::format("{}: {}", what, std::strerror(errno));
    ::close(fd);
    ::unlink(tmp.c_str());
    return msg;
  };
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(fmt::format("cannot write the report to '{}'", path));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail(fmt::format("cannot write the report to '{}'", path));
  ::close(fd);
  // link() refuses to replace anything, so of two racing writers exactly one wins.
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    if (err == EEXIST)  // it came after the check above: say what check_new_file() says of it now
      return check_new_file(path).value_or(fmt::format("'{}' already exists; it was left untouched", path));
    return fmt::format("cannot create '{}': {}", path, std::strerror(err));
  }
  ::unlink(tmp.c_str());
  return std::nullopt;
}

}  // namespace kd
