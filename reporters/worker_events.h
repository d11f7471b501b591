// What the decision needs of the worker's typed events (verdict/decision.h WorkerEvents). It lives beside
// the report, not in verdict/: the decision stays pure and includes nothing of contract/.
#pragma once
#include <vector>

#include "contract/event_types.h"
#include "verdict/decision.h"

namespace kd {

WorkerEvents read_worker_events(const std::vector<events::Event>& events);

}  // namespace kd
