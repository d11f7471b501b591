// The machine-readable action of a failing verdict (the report's error.action; docs/fleets.md "Actions"): one word
// of a fixed vocabulary, for a drain script, a node condition or a scheduler label, where next_action is a sentence
// for a person. It is decided with the cause: each signature has its action (verdict/signature_row.h), and a failure
// no signature explains gets its code's own (verdict/codes.cpp). Words never change meaning; a new one is added at
// the end.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

namespace kd {

enum class Action {
  Rerun,           // nothing found wrong with the machine or the command: a transient or contended state
  FixCommand,      // the command line, its files or its options
  FixInstall,      // the software stack: LibTorch, this suite's build, an extension, the driver's version for the build
  FixEnvironment,  // the process's surroundings: limits, container, variables, permissions, network settings
  FixModel,        // the user's model, spec or application
  Triage,          // the evidence does not say whose fault it is: a person reads the report
  ResetGpu,        // the GPU needs a reset (or the node a reboot) before it takes work again
  DrainNode,       // the node needs its administrator: stop scheduling work on it
  ReplaceGpu,      // the card is failing: drain the node and have it replaced
};

struct ActionInfo {
  Action action;
  std::string_view word;     // "reset_gpu": the report's and the metrics' value
  std::string_view meaning;  // for automation: what to do, who does it
  bool node_at_fault;        // a drain script takes the node out of service for it
};

// The vocabulary, in its order (docs/fleets.md lists the same).
const std::vector<ActionInfo>& action_vocabulary();
std::string_view action_word(Action a);
std::optional<Action> action_from_word(std::string_view word);
bool node_at_fault(Action a);
// The more severe of two node actions (reset_gpu < drain_node < replace_gpu; any node action above the others).
Action more_severe(Action a, Action b);

}  // namespace kd
