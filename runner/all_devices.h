// --device-index all: the chosen layers on every visible GPU, one worker each, then the peer
// layer (L7) in one more worker when two or more GPUs are visible. The first run (GPU 0) learns
// how many GPUs are visible from its facts; with none it is the whole answer (e.g. 6). Each run
// has the whole --timeout to itself, so a hung GPU ends its own run (10) and the others are
// still checked. The runs go one after another: the GPUs' measurements do not share the host.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/options.h"

namespace kd {

// The layers each GPU's worker runs: the user's without L7 (the peer layer spans all GPUs);
// --layers L7 alone checks L2 on each GPU first. Empty: the plain run.
std::vector<std::string> per_device_layers(const std::vector<std::string>& layers);

// Whether the peer layer runs: in the plain run, with --full, and when --layers names L7.
bool wants_peer_layer(const std::vector<std::string>& layers);

// run_one runs one worker with these options and returns its report; splits_l4: it is GPU 0's, which also splits L4
// over every GPU (suites/l4_across_devices.cpp). stopped() says the user interrupted (no further GPU is started).
// Returns the merged report (reporters/device_merge.h).
using RunOne = std::function<nlohmann::json(const Options& options, bool splits_l4)>;
nlohmann::json check_all_devices(const Options& o, const RunOne& run_one, const std::function<bool()>& stopped);

}  // namespace kd
