#include "actions.h"

namespace kd {

const std::vector<ActionInfo>& action_vocabulary() {
  static const std::vector<ActionInfo> words = {
      {Action::Rerun, "rerun", "run the same check again later, unchanged; if it repeats, a person looks", false},
      {Action::FixCommand, "fix_command", "the command is wrong (an option, a path, an output file): change it", false},
      {Action::FixInstall, "fix_install",
       "the software is wrong (LibTorch, this suite's build, an extension, a driver too old for the build): install "
       "or rebuild it",
       false},
      {Action::FixEnvironment, "fix_environment",
       "the process's surroundings are wrong (limits, the container's devices, variables, permissions, the network "
       "settings of a job): change them where the job is defined",
       false},
      {Action::FixModel, "fix_model", "the user's model, spec or application is at fault: its owner fixes it", false},
      {Action::Triage, "triage",
       "the evidence does not say whose fault it is: a person reads the report; automation neither drains nor reruns "
       "blindly",
       false},
      {Action::ResetGpu, "reset_gpu",
       "the GPU must be reset (nvidia-smi -r with no process on it, or a reboot) before it takes work: take the node "
       "out of service until then",
       true},
      {Action::DrainNode, "drain_node",
       "the node itself is at fault (its driver, services or hardware): drain it for its administrator", true},
      {Action::ReplaceGpu, "replace_gpu", "the card is failing: drain the node and have the GPU replaced", true},
  };
  return words;
}

std::string_view action_word(Action a) {
  for (const auto& i : action_vocabulary())
    if (i.action == a) return i.word;
  return "triage";
}

std::optional<Action> action_from_word(std::string_view word) {
  for (const auto& i : action_vocabulary())
    if (i.word == word) return i.action;
  return std::nullopt;
}

bool node_at_fault(Action a) {
  for (const auto& i : action_vocabulary())
    if (i.action == a) return i.node_at_fault;
  return false;
}

Action more_severe(Action a, Action b) {
  auto rank = [](Action x) {
    return x == Action::ReplaceGpu ? 3 : x == Action::DrainNode ? 2 : x == Action::ResetGpu ? 1 : 0;
  };
  return rank(b) > rank(a) ? b : a;
}

}  // namespace kd
