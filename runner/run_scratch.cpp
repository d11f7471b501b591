#include "run_scratch.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kd {
namespace {

bool write_private(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return ::close(fd) == 0 && done == content.size();
}

}  // namespace

std::optional<std::string> RunScratch::open(const std::optional<app::SpecFiles>& spec) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);  // TMPDIR, else /tmp
  if (ec) return fmt::format("no temporary folder: {}", ec.message());
  std::string t = (base / "kd-run-XXXXXX").string();
  if (!::mkdtemp(t.data())) return fmt::format("cannot create a folder in '{}': {}", base.string(), std::strerror(errno));
  path_ = t;
  if (const char* old = std::getenv("TMPDIR")) old_tmpdir_ = old;
  if (::setenv("TMPDIR", path_.c_str(), 1) != 0) return "cannot set TMPDIR";
  tmpdir_set_ = true;
  if (!spec) return std::nullopt;
  std::string text = spec->spec;
  if (spec->reference) {  // the copy names its own copy of the reference, next to it
    if (!write_private(path_ + "/reference.json", *spec->reference)) return "cannot copy the reference file";
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);  // read_spec_files parsed it (depth bounded)
    if (j.is_discarded()) return "the spec changed";
    j["outputs"]["reference"]["file"] = "reference.json";
    text = j.dump();
  }
  if (!write_private(path_ + "/input.json", text)) return "cannot copy the spec";
  input_copy_ = path_ + "/input.json";
  return std::nullopt;
}

RunScratch::~RunScratch() {
  if (tmpdir_set_) {
    if (old_tmpdir_) ::setenv("TMPDIR", old_tmpdir_->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace kd
