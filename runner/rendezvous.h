// Where the ranks of a job meet for L8 (docs/fleet.md): from the options, else from the environment
// the job already has, in this order: torchrun's variables, a Slurm step's, a Kubernetes Indexed Job's.
// Pure: the environment comes in as a function, so every rule is unit-tested.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "cli.h"

namespace kd {

inline constexpr int kDefaultRendezvousPort = 29500;  // torchrun's

struct Rendezvous {
  std::string source;  // "options", "torchrun", "slurm" or "kubernetes"
  std::string host;    // rank 0's address: used to meet, never reported
  int port = kDefaultRendezvousPort;
  int world_size = 1, rank = 0;
  int local_rank = 0;  // this rank's place on its machine (LOCAL_RANK, SLURM_LOCALID); 0 when unknown
};

struct RendezvousError {
  std::string message;  // names the variable that is missing or wrong
};

struct NoRendezvous {};

using Environment = std::function<std::optional<std::string>(const std::string& name)>;
using RendezvousResult = std::variant<NoRendezvous, Rendezvous, RendezvousError>;

RendezvousResult find_rendezvous(const Options& o, const Environment& env);

// The first host of a Slurm node list: "gpu[07-09,12],cpu01" -> "gpu07".
std::string first_slurm_host(const std::string& nodelist);

// "HOST:PORT" or "[IPv6]:PORT"; nullopt when malformed.
std::optional<std::pair<std::string, int>> parse_host_port(const std::string& s);

// The process's own environment.
Environment process_environment();

}  // namespace kd
