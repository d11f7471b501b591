# kd_minimal_check, variant B of scripts/bench: built inside the suite's build (bench/CMakeLists.txt) and,
# for the fresh-clone measurement, as a project of its own (bench/minimal/), from the same lines.
set(KD_BENCH_DIR ${CMAKE_CURRENT_LIST_DIR})
set(KD_BENCH_SYNC ${KD_BENCH_DIR}/device_sync_none.cpp)
if(TARGET c10_cuda)
  set(KD_BENCH_SYNC ${KD_BENCH_DIR}/device_sync_cuda.cpp)
endif()
add_executable(kd_minimal_check ${KD_BENCH_DIR}/minimal_check.cpp ${KD_BENCH_SYNC})
target_include_directories(kd_minimal_check PRIVATE ${KD_BENCH_DIR}/..)
target_link_libraries(kd_minimal_check PRIVATE ${TORCH_LIBRARIES})
