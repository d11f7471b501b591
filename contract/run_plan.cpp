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

constexpr std::pair<ProcessRole, const char*> kRoles[] = {
    {ProcessRole::Worker, "worker"},        {ProcessRole::BatchJob, "batch_job"}, {ProcessRole::ShardJob, "shard_job"},
    {ProcessRole::RangeJob, "range_job"},   {ProcessRole::ModelRerun, "model_rerun"}};

json role_document(const Role& r) {
  const char* kind = "";
  for (const auto& [role, name] : kRoles)
    if (role == r.kind) kind = name;
  return {{"kind", kind},
          {"event_fd", r.event_fd},
          {"run_id", r.run_id},
          {"across_devices", r.across_devices},
          {"job_folder", r.job_folder},
          {"standby", r.standby},
          {"allocator_share", r.allocator_share},
          {"shard_ids", r.shard_ids},
          {"floors", r.floors}};
}

// A field left out keeps its default; one of the wrong type makes the role unreadable.
template <class T>
bool read_field(const json& j, const char* key, T* out) {
  if (!j.contains(key)) return true;
  try {
    *out = j[key].get<T>();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

std::optional<Role> role_from_document(const json& j) {
  if (!j.is_object()) return std::nullopt;
  Role r;
  bool known = false;
  for (const auto& [role, name] : kRoles)
    if (j.value("kind", "") == name) r.kind = role, known = true;
  const bool ok = known && read_field(j, "event_fd", &r.event_fd) && read_field(j, "run_id", &r.run_id) &&
                  read_field(j, "across_devices", &r.across_devices) && read_field(j, "job_folder", &r.job_folder) &&
                  read_field(j, "standby", &r.standby) && read_field(j, "allocator_share", &r.allocator_share) &&
                  read_field(j, "shard_ids", &r.shard_ids) && read_field(j, "floors", &r.floors);
  return ok ? std::optional(r) : std::nullopt;
}

}  // namespace

json plan_document(const Plan& plan) {
  json options = json::object();
  for (const OptionRow& r : option_table())
    if (travels(r)) options[r.key] = r.get(plan.options);
  return {{"plan_version", kPlanVersion}, {"role", role_document(plan.role)}, {"options", options}};
}

std::variant<Plan, std::string> plan_from_document(const json& document) {
  if (!document.is_object() || document.value("plan_version", json()) != kPlanVersion ||
      !document.contains("options") || !document["options"].is_object())
    return fmt::format("not a run plan of version {}", kPlanVersion);
  const std::optional<Role> role = role_from_document(document.value("role", json()));
  if (!role) return std::string("the plan's role is missing or malformed");
  Plan plan{*role, Options{}};
  const json& fields = document["options"];
  for (const OptionRow& r : option_table()) {
    if (!travels(r)) continue;
    if (!fields.contains(r.key)) continue;  // its default
    try {
      r.set(fields[r.key], plan.options);
    } catch (const json::exception&) {
      return fmt::format("the plan's field '{}' has the wrong type", r.key);
    }
  }
  return plan;
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

std::optional<std::string> write_plan(const Plan& plan, const std::string& path) {
  if (!write_private_file(path, plan_document(plan).dump() + "\n")) return fmt::format("cannot write {}: {}", path, std::strerror(errno));
  return std::nullopt;
}

std::variant<Plan, std::string> read_plan(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fmt::format("cannot read the plan {}", path);
  std::stringstream s;
  s << in.rdbuf();
  if (s.str().size() > kMaxPlanBytes) return std::string("the plan is too large");
  const json plan = json::parse(s.str(), nullptr, false);
  if (plan.is_discarded()) return std::string("the plan is not JSON");
  return plan_from_document(plan);
}

}  // namespace kd
