// The names of an AOTInductor package's outputs, from its call spec (AOTIModelPackageLoader::get_call_spec):
// the output's pytree as torch.utils._pytree.treespec_dumps writes it. Leaves are named as the TorchScript
// outputs are (probe_model.cpp's flatten): dict keys, positions in tuples and lists, joined with '.'; a lone
// tensor is "0". Torch-free (nlohmann/json), so the tool's unit tests read recorded specs.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kd::probe {

// nullopt when the spec cannot be read (another protocol, malformed): the caller names by position then.
std::optional<std::vector<std::string>> pytree_leaf_names(const std::string& spec);

}  // namespace kd::probe
