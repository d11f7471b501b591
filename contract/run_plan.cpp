#include "run_plan.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "option_table.h"

namespace kd {

using nlohmann::json;

namespace {

constexpr size_t kMaxPlanBytes = 4u << 20;  // a plan holds paths and flags: far below this

bool travels(const OptionRow& r) { return r.to_worker && !r.key.empty() && r.get && r.set; }

}  // namespace

json plan_document(const Options& o) {
  json options = json::object();
  for (const OptionRow& r : option_table())
    if (travels(r)) options[r.key] = r.get(o);
  return {{"plan_version", kPlanVersion}, {"options", options}};
}

std::variant<Options, std::string> options_from_plan(const json& plan) {
  if (!plan.is_object() || plan.value("plan_version", json()) != kPlanVersion || !plan.contains("options") ||
      !plan["options"].is_object())
    return fmt::format("not a run plan of version {}", kPlanVersion);
  Options o;
  const json& fields = plan["options"];
  for (const OptionRow& r : option_table()) {
    if (!travels(r)) continue;
    if (!fields.contains(r.key)) continue;  // its default
    try {
      r.set(fields[r.key], o);
    } catch (const json::exception&) {
      return fmt::format("the plan's field '{}' has the wrong type", r.key);
    }
  }
  return o;
}

bool write_private_file(const std::string& path, const std::string& content) {
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

std::optional<std::string> write_plan(const Options& o, const std::string& path) {
  if (!write_private_file(path, plan_document(o).dump() + "\n")) return fmt::format("cannot write {}: {}", path, std::strerror(errno));
  return std::nullopt;
}

std::variant<Options, std::string> read_plan(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fmt::format("cannot read the plan {}", path);
  std::stringstream s;
  s << in.rdbuf();
  if (s.str().size() > kMaxPlanBytes) return std::string("the plan is too large");
  const json plan = json::parse(s.str(), nullptr, false);
  if (plan.is_discarded()) return std::string("the plan is not JSON");
  return options_from_plan(plan);
}

}  // namespace kd
