#include "rendezvous.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace kd {
namespace {

// A whole number from 0 to max, digits only.
std::optional<int> whole(const std::optional<std::string>& s, int max) {
  if (!s || s->empty() || s->size() > 9 || s->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const long v = std::strtol(s->c_str(), nullptr, 10);
  if (v > max) return std::nullopt;
  return static_cast<int>(v);
}

// Rank, world size and local rank from three variables; an error names the one that is wrong.
std::optional<RendezvousError> read_ranks(const Environment& env, const char* rank_var, const char* size_var,
                                          const char* local_var, Rendezvous* r) {
  const auto size = whole(env(size_var), 65536), rank = whole(env(rank_var), 65535);
  if (!size || *size < 1)
    return RendezvousError{fmt::format("{} is '{}': it must be a number of ranks from 1 to 65536", size_var,
                                       env(size_var).value_or(""))};
  if (!rank || *rank >= *size)
    return RendezvousError{fmt::format("{} is '{}': it must be a rank from 0 to {} ({} is {})", rank_var,
                                       env(rank_var).value_or(""), *size - 1, size_var, *size)};
  r->world_size = *size;
  r->rank = *rank;
  if (local_var && env(local_var)) {
    const auto local = whole(env(local_var), 65535);
    if (!local) return RendezvousError{fmt::format("{} is '{}': it must be a whole number", local_var, *env(local_var))};
    r->local_rank = *local;
  }
  return std::nullopt;
}

std::optional<RendezvousError> read_port(const Environment& env, int fallback, Rendezvous* r) {
  r->port = fallback;
  if (!env("MASTER_PORT")) return std::nullopt;
  const auto port = whole(env("MASTER_PORT"), 65535);
  if (!port || *port < 1)
    return RendezvousError{fmt::format("MASTER_PORT is '{}': it must be a port from 1 to 65535", *env("MASTER_PORT"))};
  r->port = *port;
  return std::nullopt;
}

RendezvousResult from_options(const Options& o) {
  Rendezvous r;
  r.source = "options";
  const auto hp = parse_host_port(*o.rendezvous);  // checked by the command line already
  if (!hp) return RendezvousError{"--rendezvous must be HOST:PORT"};
  r.host = hp->first;
  r.port = hp->second;
  r.world_size = o.world_size.value_or(1);
  r.rank = o.rank.value_or(0);
  return r;
}

RendezvousResult from_torchrun(const Environment& env) {
  Rendezvous r;
  r.source = "torchrun";
  if (auto e = read_ranks(env, "RANK", "WORLD_SIZE", "LOCAL_RANK", &r)) return *e;
  if (!env("MASTER_ADDR") || env("MASTER_ADDR")->empty())
    return RendezvousError{"RANK and WORLD_SIZE are set but MASTER_ADDR is not: rank 0's address is needed"};
  r.host = *env("MASTER_ADDR");
  if (auto e = read_port(env, kDefaultRendezvousPort, &r)) return *e;
  return r;
}

// A task of an srun step (a batch script's own shell is no rank: it has no step task count).
RendezvousResult from_slurm(const Environment& env) {
  Rendezvous r;
  r.source = "slurm";
  if (auto e = read_ranks(env, "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", &r)) return *e;
  if (env("MASTER_ADDR") && !env("MASTER_ADDR")->empty()) {
    r.host = *env("MASTER_ADDR");
  } else {
    for (const char* list : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"})
      if (env(list) && !env(list)->empty()) {
        r.host = first_slurm_host(*env(list));
        break;
      }
    if (r.host.empty()) return RendezvousError{"a Slurm step without SLURM_STEP_NODELIST or MASTER_ADDR: rank 0's host is unknown"};
  }
  // The same port for every task of the job, different for jobs sharing a node (MASTER_PORT overrides).
  const int job = whole(env("SLURM_JOB_ID"), 999999999).value_or(0);
  if (auto e = read_port(env, kDefaultRendezvousPort + 1 + job % 2000, &r)) return *e;
  return r;
}

RendezvousResult from_kubernetes(const Environment& env) {
  Rendezvous r;
  r.source = "kubernetes";
  if (auto e = read_ranks(env, "JOB_COMPLETION_INDEX", "WORLD_SIZE", nullptr, &r)) return *e;
  if (!env("MASTER_ADDR") || env("MASTER_ADDR")->empty())
    return RendezvousError{"an Indexed Job with WORLD_SIZE but no MASTER_ADDR: set it to pod 0's name in the headless service"};
  r.host = *env("MASTER_ADDR");
  if (auto e = read_port(env, kDefaultRendezvousPort, &r)) return *e;
  return r;
}

}  // namespace

std::optional<std::pair<std::string, int>> parse_host_port(const std::string& s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  std::string host = s.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return std::nullopt;  // an IPv6 address goes in brackets
  }
  if (host.find_first_of(" \t/") != std::string::npos) return std::nullopt;
  const auto port = whole(s.substr(colon + 1), 65535);
  if (!port || *port < 1) return std::nullopt;
  return std::make_pair(host, *port);
}

std::string first_slurm_host(const std::string& nodelist) {
  size_t end = nodelist.size();  // the first entry: up to the first comma outside brackets
  for (size_t i = 0, depth = 0; i < nodelist.size() && end == nodelist.size(); ++i) {
    if (nodelist[i] == '[') ++depth;
    if (nodelist[i] == ']' && depth) --depth;
    if (nodelist[i] == ',' && !depth) end = i;
  }
  const std::string first = nodelist.substr(0, end);
  const size_t open = first.find('['), close = first.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return first;
  // "gpu[07-09,12]-ib": the prefix, the range's first number as written (zero padding kept), the suffix.
  const size_t stop = first.find_first_of("-,]", open + 1);
  return first.substr(0, open) + first.substr(open + 1, stop - open - 1) + first.substr(close + 1);
}

RendezvousResult find_rendezvous(const Options& o, const Environment& env) {
  if (o.rendezvous) return from_options(o);
  if (env("RANK") || (env("WORLD_SIZE") && !env("JOB_COMPLETION_INDEX"))) return from_torchrun(env);
  if (env("SLURM_PROCID") && env("SLURM_STEP_NUM_TASKS")) return from_slurm(env);
  if (env("JOB_COMPLETION_INDEX") && env("WORLD_SIZE")) return from_kubernetes(env);
  return NoRendezvous{};
}

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

}  // namespace kd
