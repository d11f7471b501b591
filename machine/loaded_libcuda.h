// Which libcuda.so.1 the CUDA runtime loaded in this process (the worker, after L2 asked for the GPU): the
// driver's own, one found through LD_LIBRARY_PATH, or a forward-compatibility one (a folder named compat), with
// its version from its file name and the CUDA version it reports. Never its path. host.nvidia.libcuda.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd::machine {

nlohmann::json loaded_libcuda();

// Its source from its real path and LD_LIBRARY_PATH: "compat", "library_path" or "system". Pure.
std::string libcuda_source(const std::string& real_path, const std::string& ld_library_path);
// "580.95.05" from "libcuda.so.580.95.05"; "" when the name carries none.
std::string libcuda_file_version(const std::string& real_path);

}  // namespace kd::machine
