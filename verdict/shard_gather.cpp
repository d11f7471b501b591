#include "shard_gather.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace kd::shard {

std::vector<Shard> split(const std::vector<int64_t>& ids, const std::vector<int>& devices) {
  std::vector<Shard> out;
  const size_t k = devices.size(), n = ids.size();
  size_t at = 0;
  for (size_t i = 0; i < k; ++i) {
    const size_t take = n / k + (i < n % k ? 1 : 0);
    out.push_back({devices[i], std::vector<int64_t>(ids.begin() + at, ids.begin() + at + take)});
    at += take;
  }
  return out;
}

Gathered gather(const std::vector<int64_t>& ids, const std::vector<ShardOutput>& outputs, const std::string& unit) {
  Gathered g;
  auto broken = [&](std::string rule, std::string message, std::optional<int> device) {
    g.violation = Violation{std::move(rule), std::move(message), device};
    return g;
  };
  for (const ShardOutput& o : outputs)
    if (o.error) return broken("shard_failed", fmt::format("the shard on {} {} failed: {}", unit, o.device, *o.error), o.device);
  std::map<int64_t, size_t> position;
  for (size_t i = 0; i < ids.size(); ++i) position.emplace(ids[i], i);
  std::vector<std::optional<int>> from(ids.size());
  g.rows.assign(ids.size(), {});
  for (const ShardOutput& o : outputs) {
    if (o.rows.size() != o.ids.size())
      return broken("shape", fmt::format("the shard on {} {} returned {} ids but {} rows", unit, o.device, o.ids.size(), o.rows.size()),
                    o.device);
    for (size_t j = 0; j < o.ids.size(); ++j) {
      const auto p = position.find(o.ids[j]);
      if (p == position.end())
        return broken("foreign", fmt::format("id {} came back from {} {} but was never sent", o.ids[j], unit, o.device), o.device);
      if (from[p->second])
        return broken("doubled", fmt::format("id {} came back twice (from {} {} and {} {})", o.ids[j], unit, *from[p->second], unit, o.device),
                      o.device);
      from[p->second] = o.device;
      g.rows[p->second] = o.rows[j];
    }
  }
  for (size_t i = 0; i < ids.size(); ++i)
    if (!from[i]) return broken("lost", fmt::format("id {} did not come back from any {}", ids[i], unit), std::nullopt);
  return g;
}

std::optional<Violation> compare(const std::vector<int64_t>& ids, const std::vector<std::vector<double>>& gathered,
                                 const std::vector<std::vector<double>>& single, const std::vector<Shard>& shards,
                                 double atol, double rtol, const std::string& unit) {
  auto owner = [&](int64_t id) -> std::optional<int> {
    for (const Shard& s : shards)
      for (int64_t x : s.ids)
        if (x == id) return s.device;
    return std::nullopt;
  };
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto device = owner(ids[i]);
    const std::string gpu = device ? fmt::format("{} {}", unit, *device) : "no " + unit;
    if (i >= gathered.size() || i >= single.size() || gathered[i].size() != single[i].size())
      return Violation{"shape", fmt::format("id {} (from {}): the gathered row and the single-device row differ in size", ids[i], gpu),
                       device};
    for (size_t d = 0; d < single[i].size(); ++d) {
      const double a = gathered[i][d], b = single[i][d];
      if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b)))
        return Violation{"mismatch", fmt::format("id {} (from {}), element {}: {} gathered, {} on a single device", ids[i], gpu, d, a, b),
                         device};
    }
  }
  return std::nullopt;
}

}  // namespace kd::shard
