// Where the ranks of a job meet (fixtures/rendezvous.h): options first, then torchrun's, a Slurm step's
// and a Kubernetes Indexed Job's variables, with a message naming the variable that is wrong.
#include "fixtures/rendezvous.h"
#include "contract/values.h"

#include <map>

#include <gtest/gtest.h>

namespace kd {
namespace {

Environment env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& n) -> std::optional<std::string> {
    const auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Rendezvous found(const Options& o, std::map<std::string, std::string> vars) {
  const RendezvousResult r = find_rendezvous(o, env_of(std::move(vars)));
  EXPECT_TRUE(std::holds_alternative<Rendezvous>(r));
  return std::holds_alternative<Rendezvous>(r) ? std::get<Rendezvous>(r) : Rendezvous{};
}

std::string error(std::map<std::string, std::string> vars) {
  const RendezvousResult r = find_rendezvous(Options{}, env_of(std::move(vars)));
  EXPECT_TRUE(std::holds_alternative<RendezvousError>(r));
  return std::holds_alternative<RendezvousError>(r) ? std::get<RendezvousError>(r).message : "";
}

TEST(Rendezvous, NoneWhenNothingSaysSo) {
  EXPECT_TRUE(std::holds_alternative<NoRendezvous>(find_rendezvous(Options{}, env_of({}))));
  // A batch script's own shell is rank 0 of nothing: no step task count, no rendezvous.
  EXPECT_TRUE(std::holds_alternative<NoRendezvous>(
      find_rendezvous(Options{}, env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "7"}}))));
  // An Indexed Job without WORLD_SIZE is independent checks, one per pod.
  EXPECT_TRUE(std::holds_alternative<NoRendezvous>(find_rendezvous(Options{}, env_of({{"JOB_COMPLETION_INDEX", "2"}}))));
}

TEST(Rendezvous, OptionsComeFirst) {
  Options o;
  o.rendezvous = "[fe80::1]:1234";
  o.world_size = 4;
  o.rank = 3;
  const Rendezvous r = found(o, {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "x"}});
  EXPECT_EQ(r.source, "options");
  EXPECT_EQ(r.host, "fe80::1");
  EXPECT_EQ(r.port, 1234);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.rank, 3);
}

TEST(Rendezvous, Torchrun) {
  const Rendezvous r = found({}, {{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node1"},
                                  {"MASTER_PORT", "29400"}, {"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}});
  EXPECT_EQ(r.source, "torchrun");  // before Slurm's, which launched torchrun
  EXPECT_EQ(r.host, "node1");
  EXPECT_EQ(r.port, 29400);
  EXPECT_EQ(r.world_size, 8);
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(found({}, {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_ADDR", "h"}}).port, kDefaultRendezvousPort);
}

TEST(Rendezvous, TorchrunErrorsNameTheVariable) {
  EXPECT_EQ(error({{"RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "RANK and WORLD_SIZE are set but MASTER_ADDR is not: rank 0's address is needed");
  EXPECT_EQ(error({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}),
            "RANK is '2': it must be a rank from 0 to 1 (WORLD_SIZE is 2)");
  EXPECT_EQ(error({{"RANK", "0"}, {"MASTER_ADDR", "h"}}), "WORLD_SIZE is '': it must be a number of ranks from 1 to 65536");
  EXPECT_EQ(error({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}), "RANK is '': it must be a rank from 0 to 1 (WORLD_SIZE is 2)");
  EXPECT_EQ(error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "http"}}),
            "MASTER_PORT is 'http': it must be a port from 1 to 65535");
  EXPECT_EQ(error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"LOCAL_RANK", "-1"}}),
            "LOCAL_RANK is '-1': it must be a whole number");
}

TEST(Rendezvous, SlurmStep) {
  const Rendezvous r = found({}, {{"SLURM_PROCID", "3"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_LOCALID", "1"},
                                  {"SLURM_STEP_NODELIST", "gpu[07-09,12]"}, {"SLURM_JOB_ID", "123456"}});
  EXPECT_EQ(r.source, "slurm");
  EXPECT_EQ(r.host, "gpu07");
  EXPECT_EQ(r.port, kDefaultRendezvousPort + 1 + 123456 % 2000);  // the same on every task of the job
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.local_rank, 1);
  const Rendezvous m = found({}, {{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"MASTER_ADDR", "head"},
                                  {"MASTER_PORT", "4000"}, {"SLURM_STEP_NODELIST", "a,b"}});
  EXPECT_EQ(m.host, "head");
  EXPECT_EQ(m.port, 4000);
  EXPECT_EQ(error({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}}),
            "a Slurm step without SLURM_STEP_NODELIST or MASTER_ADDR: rank 0's host is unknown");
}

TEST(Rendezvous, SlurmNodeLists) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(first_slurm_host("gpu[07-09,12],cpu01"), "gpu07");
  EXPECT_EQ(first_slurm_host("gpu[3,5]"), "gpu3");
  EXPECT_EQ(first_slurm_host("rack1-n[001-004]-ib"), "rack1-n001-ib");
}

TEST(Rendezvous, KubernetesIndexedJob) {
  const Rendezvous r = found({}, {{"JOB_COMPLETION_INDEX", "1"}, {"WORLD_SIZE", "3"},
                                  {"MASTER_ADDR", "kd-0.kd-collective"}});
  EXPECT_EQ(r.source, "kubernetes");
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.world_size, 3);
  EXPECT_EQ(r.port, kDefaultRendezvousPort);
  EXPECT_EQ(error({{"JOB_COMPLETION_INDEX", "0"}, {"WORLD_SIZE", "2"}}),
            "an Indexed Job with WORLD_SIZE but no MASTER_ADDR: set it to pod 0's name in the headless service");
}

TEST(Rendezvous, HostAndPort) {
  EXPECT_EQ(parse_host_port("10.0.0.1:29500"), std::make_pair(std::string("10.0.0.1"), 29500));
  EXPECT_EQ(parse_host_port("[::1]:80"), std::make_pair(std::string("::1"), 80));
  for (const char* bad : {"", "host", ":29500", "host:", "host:0", "host:65536", "::1:80", "[]:80", "a b:1", "h:+1", "h:1e3"})
    EXPECT_FALSE(parse_host_port(bad).has_value()) << bad;
}

}  // namespace
}  // namespace kd
