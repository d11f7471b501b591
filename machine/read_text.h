// Small text files of /proc and /sys, read whole: nothing when absent or unreadable. Header-only: the probe's
// range sweep (L5) reads the same files (memory_headroom.h).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <string>

namespace kd::machine {

inline std::optional<std::string> read_text(const std::string& path, size_t limit = 1 << 20) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (ssize_t n; text.size() < limit && (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

// The first line of a file, without its newline and surrounding blanks.
inline std::optional<std::string> read_line(const std::string& path) {
  std::optional<std::string> text = read_text(path, 4096);
  if (!text) return std::nullopt;
  std::string line = text->substr(0, text->find('\n'));
  const size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : line.substr(b, e - b + 1);
}

}  // namespace kd::machine
