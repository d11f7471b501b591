# cmake -P: the check that stops a build mixing two LibTorch installations (cmake/OneLibTorch.cmake),
# on the pieces of the case that once built silently without GPU code: a pip LibTorch chosen with
# Torch_DIR while Debian's libtorch-dev gave the Caffe2 config. Real folders, made here.
include(${KD_SOURCE_DIR}/cmake/OneLibTorch.cmake)
set(root ${KD_WORK_DIR}/one-libtorch)
file(REMOVE_RECURSE ${root})
foreach(dir pip/torch/share/cmake/Torch pip/torch/share/cmake/Caffe2 pip/torch/lib
            usr/lib/x86_64-linux-gnu/cmake/Caffe2 usr/lib/x86_64-linux-gnu/cmake/Torch)
  file(MAKE_DIRECTORY ${root}/${dir})
endforeach()
file(TOUCH ${root}/pip/torch/lib/libc10.so ${root}/usr/lib/x86_64-linux-gnu/libc10.so)

function(expect what got want)
  if(NOT "${got}" STREQUAL "${want}")
    message(FATAL_ERROR "${what}: got '${got}', want '${want}'")
  endif()
endfunction()

set(pip ${root}/pip/torch)
kd_torch_lib_folder(${pip}/share/cmake/Torch lib)
expect("pip's library folder" "${lib}" "${pip}/lib")
kd_torch_lib_folder(${root}/usr/lib/x86_64-linux-gnu/cmake/Torch lib)
expect("Debian's library folder" "${lib}" "${root}/usr/lib/x86_64-linux-gnu")

# All from the chosen one: nothing foreign.
kd_foreign_torch_pieces(foreign "${pip}/share/cmake;${pip}/lib" "Torch_DIR=${pip}/share/cmake/Torch"
                        "Caffe2_DIR=${pip}/share/cmake/Caffe2" "c10=${pip}/lib/libc10.so")
expect("one installation" "${foreign}" "none")
# Debian's Caffe2 config and library beside pip's Torch config: both named, with where they came from.
kd_foreign_torch_pieces(foreign "${pip}/share/cmake;${pip}/lib" "Torch_DIR=${pip}/share/cmake/Torch"
                        "Caffe2_DIR=${root}/usr/lib/x86_64-linux-gnu/cmake/Caffe2"
                        "c10=${root}/usr/lib/x86_64-linux-gnu/libc10.so")
expect("two installations" "${foreign}"
       "Caffe2_DIR from ${root}/usr/lib/x86_64-linux-gnu/cmake/Caffe2;c10 from ${root}/usr/lib/x86_64-linux-gnu/libc10.so")
# A folder whose name merely starts like the chosen one is another folder.
file(MAKE_DIRECTORY ${root}/pip/torch-old/lib)
kd_foreign_torch_pieces(foreign "${pip}/lib" "c10=${root}/pip/torch-old/lib")
expect("a sibling with a longer name" "${foreign}" "c10 from ${root}/pip/torch-old/lib")
file(REMOVE_RECURSE ${root})
message(STATUS "one_libtorch_test: ok")
