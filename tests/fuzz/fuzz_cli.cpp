// Fuzzes parse_command_line with arbitrary arguments (the input split at NUL bytes). Beyond
// "no crash, no sanitizer report": every accepted command line lies in the documented ranges,
// every refusal says why, and the run plan the supervisor hands the worker reads back as the same
// options (a mismatch would make the worker check something other than what was asked).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <vector>

#include "contract/options.h"
#include "contract/run_plan.h"

namespace {

const std::vector<std::string> kLayers = {"L1", "L2", "L3", "L4", "L5", "L6", "L7"};  // what the diagnostic registers

// A broken property: say which, then abort so that libFuzzer keeps the input.
#define check(ok) ((ok) ? (void)0 : (std::fprintf(stderr, "property failed: %s (line %d)\n", #ok, __LINE__), std::abort()))

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) args.emplace_back();
    else args.back() += static_cast<char>(data[i]);
  }
  const kd::ParseResult parsed = kd::parse_command_line(args, kLayers);
  if (const auto* e = std::get_if<kd::UsageError>(&parsed)) {
    check(!e->message.empty());
    return 0;
  }
  const auto* o = std::get_if<kd::Options>(&parsed);
  if (!o) return 0;  // --help
  check(o->device == "cuda" || o->device == "cpu");
  check(o->device_index >= 0 && o->device_index <= 1023);
  check(!o->all_devices || (!o->cpu_mode() && !o->in_process && o->gtest_args.empty()));
  check(o->timeout_s >= 5 && o->timeout_s <= 120);
  check(!o->output || !o->output->empty());
  for (const auto& l : o->layers) check(std::find(kLayers.begin(), kLayers.end(), l) != kLayers.end());
  if (o->plan) return 0;  // started on a plan: main() reads the options from it

  kd::Plan sent{kd::Role{}, *o};
  sent.role.event_fd = 3;
  const auto again = kd::plan_from_document(kd::plan_document(sent));
  const auto* plan = std::get_if<kd::Plan>(&again);
  check(plan != nullptr);
  const kd::Options* w = &plan->options;
  check(w->all_devices == o->all_devices && w->device_list == o->device_list);
  check(plan->role.event_fd == 3 && w->device == o->device && w->device_index == o->device_index);
  check(w->layers == o->layers && w->fault == o->fault && w->gtest_args == o->gtest_args);
  check(w->memory_fraction == o->memory_fraction);
  check(!o->memory_fraction || (*o->memory_fraction > 0 && *o->memory_fraction <= 1));
  return 0;
}
