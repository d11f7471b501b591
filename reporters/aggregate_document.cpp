#include "aggregate_document.h"

#include "verdict/json_read.h"

namespace kd::fleet {
namespace {

using nlohmann::json;

json text(const Text& t) { return t ? json(*t) : json(); }

json to_json(const Machine& m) {
  return {{"report", m.report},   {"run_id", m.run_id},       {"status", m.status},   {"code", m.code},
          {"exit_code", m.exit_code}, {"layer", text(m.layer)}, {"stage", text(m.stage)}, {"message", text(m.message)},
          {"target", m.target},   {"device", text(m.device)}, {"libtorch", text(m.libtorch)}, {"cuda", text(m.cuda)},
          {"hip", text(m.hip)},   {"driver", text(m.driver)}, {"suite", text(m.suite)},
          {"rank", m.rank ? json(*m.rank) : json()}, {"world_size", m.world_size ? json(*m.world_size) : json()},
          {"action", text(m.action)}};
}

json to_json(const RankRow& r) {
  return {{"rank", r.rank}, {"report", r.report}, {"status", r.status}, {"code", r.code}, {"stage", text(r.stage)}};
}

json to_json(const CodeCount& c) { return {{"code", c.code}, {"exit_code", c.exit_code}, {"count", c.count}}; }
json to_json(const ActionCount& c) {
  return {{"action", c.action}, {"node_at_fault", c.node_at_fault}, {"count", c.count}};
}
json to_json(const NotCounted& n) { return {{"report", n.report}, {"problem", n.problem}, {"message", n.message}}; }
json to_json(const Injected& i) { return {{"report", i.report}, {"run_id", i.run_id}, {"fault", i.fault}, {"code", i.code}}; }
json to_json(const Seen& s) { return {{"value", text(s.value)}, {"count", s.count}}; }

template <class T>
json list(const std::vector<T>& items) {
  json out = json::array();
  for (const T& i : items) out.push_back(to_json(i));
  return out;
}


// Reading back: j[key] as the type, or empty.
using json_read::field;
std::string str(const json& j, const char* key) { return json_read::text(j, key); }
Text opt_str(const json& j, const char* key) { return field(j, key).is_string() ? Text(field(j, key).get<std::string>()) : std::nullopt; }
std::optional<int64_t> opt_int(const json& j, const char* key) {
  return field(j, key).is_number_integer() ? std::optional<int64_t>(field(j, key).get<int64_t>()) : std::nullopt;
}
int integer(const json& j, const char* key) { return static_cast<int>(opt_int(j, key).value_or(0)); }

template <class T, class Read>
std::vector<T> read_list(const json& j, const char* key, Read read) {
  std::vector<T> out;
  if (const json& items = field(j, key); items.is_array())
    for (const auto& item : items) out.push_back(read(item));
  return out;
}

Machine machine_from(const json& j) {
  Machine m{str(j, "report"), str(j, "run_id"), str(j, "status"), str(j, "code"), integer(j, "exit_code"),
            opt_str(j, "layer"), opt_str(j, "stage"), opt_str(j, "message"), str(j, "target"), opt_str(j, "device"),
            opt_str(j, "libtorch"), opt_str(j, "cuda"), opt_str(j, "hip"), opt_str(j, "driver"), opt_str(j, "suite"),
            opt_int(j, "rank"), opt_int(j, "world_size"), opt_str(j, "action")};
  return m;
}

RankRow rank_from(const json& j) {
  return {opt_int(j, "rank").value_or(0), str(j, "report"), str(j, "status"), str(j, "code"), opt_str(j, "stage")};
}

}  // namespace

json to_json(const Aggregate& a) {
  json versions = json::object();
  for (const auto& [key, seen] : a.versions) versions[key] = list(seen);
  json job;
  if (a.job) {
    json unreported = json::array();
    for (int64_t r : a.job->unreported_ranks) unreported.push_back(r);
    job = {{"world_size", a.job->world_size},
           {"reported", a.job->reported},
           {"unreported_ranks", unreported},
           {"status", a.job->status},
           {"first_failing", a.job->first_failing ? to_json(*a.job->first_failing) : json()},
           {"ranks", list(a.job->ranks)}};
  }
  const Counts& c = a.counts;
  return {{"schema_version", kSchemaVersion},
          {"kind", "kernodeck-aggregate"},
          {"status", a.status},
          {"exit_code", a.exit_code},
          {"counts",
           {{"reports", c.reports}, {"counted", c.counted}, {"passed", c.passed}, {"failed", c.failed},
            {"not_counted", c.not_counted}, {"injected", c.injected}}},
          {"codes", list(a.codes)},
          {"actions", list(a.actions)},
          {"failing", list(a.failing)},
          {"not_counted", list(a.not_counted)},
          {"injected", list(a.injected)},
          {"versions", versions},
          {"job", job},
          {"machines", list(a.machines)}};
}

Aggregate from_json(const json& j) {
  Aggregate a;
  a.status = str(j, "status");
  a.exit_code = integer(j, "exit_code");
  const json& c = field(j, "counts");
  a.counts = {integer(c, "reports"),     integer(c, "counted"),     integer(c, "passed"),
              integer(c, "failed"),      integer(c, "not_counted"), integer(c, "injected")};
  a.codes = read_list<CodeCount>(j, "codes", [](const json& e) {
    return CodeCount{str(e, "code"), integer(e, "exit_code"), integer(e, "count")};
  });
  a.actions = read_list<ActionCount>(j, "actions", [](const json& e) {
    return ActionCount{str(e, "action"), field(e, "node_at_fault") == true, integer(e, "count")};
  });
  a.failing = read_list<Machine>(j, "failing", machine_from);
  a.machines = read_list<Machine>(j, "machines", machine_from);
  a.not_counted = read_list<NotCounted>(j, "not_counted", [](const json& e) {
    return NotCounted{str(e, "report"), str(e, "problem"), str(e, "message")};
  });
  a.injected = read_list<Injected>(j, "injected", [](const json& e) {
    return Injected{str(e, "report"), str(e, "run_id"), str(e, "fault"), str(e, "code")};
  });
  for (const VersionRow& row : kVersionRows)
    a.versions[row.key] = read_list<Seen>(field(j, "versions"), row.key, [](const json& e) {
      return Seen{opt_str(e, "value"), integer(e, "count")};
    });
  if (const json& job = field(j, "job"); job.is_object()) {
    Job b;
    b.world_size = opt_int(job, "world_size").value_or(0);
    b.reported = integer(job, "reported");
    for (const int64_t r : read_list<int64_t>(job, "unreported_ranks", [](const json& e) {
           return e.is_number_integer() ? e.get<int64_t>() : int64_t{-1};
         }))
      if (r >= 0) b.unreported_ranks.push_back(r);
    b.status = str(job, "status");
    if (field(job, "first_failing").is_object()) b.first_failing = rank_from(field(job, "first_failing"));
    b.ranks = read_list<RankRow>(job, "ranks", rank_from);
    a.job = b;
  }
  return a;
}

}  // namespace kd::fleet
