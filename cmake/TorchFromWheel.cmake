# A CUDA pip torch built against from its own files, with or without the CUDA toolkit (the usual rented box has a
# pip torch, a driver and no nvcc; LibTorch's own config, Caffe2/public/cuda.cmake, stops at find_package(CUDAToolkit
# REQUIRED) there, and where a toolkit is installed it enables CUDA in CMake and runs nvcc, about 5 s of a configure on 2 cores).
# The probe needs only what the wheel ships: torch/include, torch/lib, and the CUDA runtime's headers and library
# from the NVIDIA wheels beside torch (nvidia/cu13 in CUDA 13 wheels, nvidia/cuda_runtime in 12) — the very libcudart
# that torch loads, whatever toolkit is installed.
# So: the imported targets of LibTorch's own export file (Caffe2Targets.cmake), with the few targets it
# refers to made from those wheel files. The CUDA runtime's headers include crt/host_defines.h, crt/host_config.h and
# nv/target, which those wheels leave out (they come with the toolkit's compiler): the probe's host compile needs only
# a few of their names, which probe/cuda_names declares (its README; tests/cuda_names checks them against the
# toolkit's headers). Where the wheel has those headers itself, they are used. No registry, no download.
# Sets what find_package(Torch) would (Torch_FOUND, Torch_VERSION,
# TORCH_LIBRARIES, TORCH_INCLUDE_DIRS, TORCH_INSTALL_PREFIX) and KD_CUDA_NAMES (wheel or declared); without the CUDA
# runtime's headers or library it sets KD_TORCH_UNBUILDABLE to the reason instead.

# The CUDA runtime's headers and library as the NVIDIA wheels next to torch lay them out (PREFIX: the torch folder):
# KD_WHEEL_CUDA_INCLUDE and KD_WHEEL_CUDART, NOTFOUND when it is not a pip torch with them.
function(kd_find_wheel_cuda prefix)
  find_path(KD_WHEEL_CUDA_INCLUDE cuda_runtime_api.h NO_DEFAULT_PATH
            PATHS "${prefix}/../nvidia/cu13/include" "${prefix}/../nvidia/cuda_runtime/include")
  find_library(KD_WHEEL_CUDART NAMES cudart libcudart.so.13 libcudart.so.12 NO_DEFAULT_PATH
               PATHS "${prefix}/../nvidia/cu13/lib" "${prefix}/../nvidia/cuda_runtime/lib")
endfunction()

# kd_torch_from_wheel(TORCH_CONFIG_DIR): the folder of the chosen TorchConfig.cmake.
function(kd_torch_from_wheel config_dir)
  get_filename_component(prefix "${config_dir}/../../.." ABSOLUTE)
  set(targets "${prefix}/share/cmake/Caffe2/Caffe2Targets.cmake")
  file(STRINGS "${config_dir}/TorchConfigVersion.cmake" version_line REGEX "set\\(PACKAGE_VERSION \"")
  string(REGEX REPLACE ".*PACKAGE_VERSION \"([^\"]+)\".*" "\\1" version "${version_line}")
  if(NOT EXISTS "${targets}")
    string(CONCAT why "LibTorch ${version} is a CUDA build and its export file (Caffe2Targets.cmake) is "
        "missing, so it cannot be built against without the CUDA toolkit: install the toolkit (nvcc)")
    set(KD_TORCH_UNBUILDABLE "${why}" PARENT_SCOPE)
    return()
  endif()
  kd_find_wheel_cuda("${prefix}")
  if(NOT KD_WHEEL_CUDA_INCLUDE OR NOT KD_WHEEL_CUDART)
    string(CONCAT why "LibTorch ${version} is a CUDA build; building against it needs the CUDA runtime "
        "headers and library (cuda_runtime_api.h, libcudart), found neither in a CUDA toolkit nor in the NVIDIA "
        "pip packages beside torch: pip install the nvidia-cuda-runtime package of your torch's CUDA version into "
        "the same environment, or install the CUDA toolkit, then build again")
    set(KD_TORCH_UNBUILDABLE "${why}" PARENT_SCOPE)
    return()
  endif()
  # crt/ and nv/target: the wheel's own when it has them, else the project's declarations of the names used.
  if(EXISTS "${KD_WHEEL_CUDA_INCLUDE}/crt/host_defines.h" AND EXISTS "${KD_WHEEL_CUDA_INCLUDE}/nv/target")
    set(cuda_includes "${KD_WHEEL_CUDA_INCLUDE}")
    set(names wheel)
  else()
    set(cuda_includes "${KD_WHEEL_CUDA_INCLUDE}" "${CMAKE_SOURCE_DIR}/probe/cuda_names")
    set(names declared)
  endif()
  # What Caffe2Targets.cmake links to by name; Caffe2Config.cmake would have made them.
  if(NOT TARGET torch::cudart)
    add_library(torch::cudart INTERFACE IMPORTED GLOBAL)
    set_target_properties(torch::cudart PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${cuda_includes}"
                                                   INTERFACE_LINK_LIBRARIES "${KD_WHEEL_CUDART}")
  endif()
  foreach(placeholder protobuf::libprotobuf caffe2::mkl)  # linked into libtorch_cpu already: nothing to add
    if(NOT TARGET ${placeholder})
      add_library(${placeholder} INTERFACE IMPORTED GLOBAL)
    endif()
  endforeach()
  include("${targets}")
  foreach(t headeronly c10 c10_cuda torch_cpu torch_cuda torch torch_cpu_library torch_cuda_library torch_library)
    if(TARGET ${t})
      set_target_properties(${t} PROPERTIES IMPORTED_GLOBAL TRUE)
    endif()
  endforeach()
  # As TorchConfig.cmake does: the C++ API's headers (torch/types.h, ...) come with the torch target.
  set_property(TARGET torch APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${prefix}/include/torch/csrc/api/include")
  set(Torch_FOUND TRUE PARENT_SCOPE)
  set(Torch_VERSION "${version}" PARENT_SCOPE)
  set(TORCH_INSTALL_PREFIX "${prefix}" PARENT_SCOPE)
  set(TORCH_INCLUDE_DIRS "${prefix}/include;${prefix}/include/torch/csrc/api/include" PARENT_SCOPE)
  set(TORCH_LIBRARIES torch c10 c10_cuda torch::cudart PARENT_SCOPE)
  set(KD_CUDA_NAMES ${names} PARENT_SCOPE)
  set(KD_CUDA_INCLUDES "${cuda_includes}" PARENT_SCOPE)
endfunction()
