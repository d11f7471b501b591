# Read by ctest (TEST_INCLUDE_FILES, after conformance-settings.cmake): asks the built
# diagnostic which layers it has and adds one test per layer:
#   conformance.L1            labels conformance, layer:L1
#   conformance.L2, .L3 ...   labels conformance, gpu, layer:L<n>; RESOURCE_GROUPS gpus:1
# Each layer requires the fixtures of all earlier ones, so a failed layer leaves the later
# ones Not Run and `ctest -R conformance.L3` runs L1 and L2 first. With KD_CONFORMANCE_GPUS=N
# the GPU layers repeat in N chains (conformance.L2.chain2, ...) after the one L1, so that
# `ctest -j N --resource-spec-file` checks N GPUs side by side.
execute_process(COMMAND "${KD_CONFORMANCE_BIN}" --gtest_list_tests "--gtest_filter=*"
                OUTPUT_VARIABLE kd_listing RESULT_VARIABLE kd_rc ERROR_QUIET)
execute_process(COMMAND "${KD_CONFORMANCE_BIN}" --kd-list-stages OUTPUT_VARIABLE kd_stage_lines ERROR_QUIET)
string(REGEX MATCHALL "L[0-9]+\\.[a-z0-9_]+" KD_CONFORMANCE_STAGES "${kd_stage_lines}")
string(REGEX MATCHALL "(^|\n)L[0-9]+_[A-Za-z0-9_]*\\." kd_suites "${kd_listing}")
set(kd_layers)
foreach(kd_suite IN LISTS kd_suites)
  string(REGEX REPLACE "^\n?(L[0-9]+)_.*" "\\1" kd_id "${kd_suite}")
  list(APPEND kd_layers ${kd_id})
endforeach()
list(REMOVE_DUPLICATES kd_layers)
# L7 (peer) spans every GPU at once; CTest gives each test one GPU (RESOURCE_GROUPS gpus:1), so it is
# not a conformance test: `kernodeck-diagnostic --device-index all` runs it. Nor is L8 (collective): it
# spans the ranks of a job, which one machine's CTest is not (docs/fleets.md runs it as a job's step).
list(REMOVE_ITEM kd_layers L7 L8)

if(NOT kd_rc EQUAL 0 OR NOT kd_layers)
  # Never zero tests that look like a pass: a test that fails and says why.
  add_test(conformance.discovery /bin/sh -c
           "\"$0\" --gtest_list_tests; echo 'kernodeck: the diagnostic did not list its layers (is it built?)' >&2; exit 1"
           "${KD_CONFORMANCE_BIN}")
  set_tests_properties(conformance.discovery PROPERTIES LABELS conformance)
  return()
endif()

# CTest's JUnit <failure message> quotes the FAIL_REGULAR_EXPRESSION that matched: with one per failing
# code and stage, checked in this order, it names the verdict. "CODE at STAGE" is the failing test's
# own line (a test failed, or its prerequisite did); "Verdict: CODE .* at stage STAGE" the verdict line
# of a run that no test ended (timeout, crash); "Verdict: CODE" the rest (a stage not declared by a
# step, e.g. L5.oom.<phase>). Only failing verdicts match: a passing layer's output never does.
# A run with a test-only --inject-fault (a KD_CONFORMANCE_BIN that adds it) marks its verdict line
# "[injected fault NAME: ...]": those come first, so that the JUnit message says the failure was injected.
# (".injected": a "[" in a CMake list would join the elements after it.)
# A layer run alone fails at its own stages or, through a prerequisite, at an earlier layer's.
function(kd_verdict_regexes layer out)
  string(SUBSTRING ${layer} 1 -1 n)
  set(stages)
  foreach(stage IN LISTS KD_CONFORMANCE_STAGES)
    string(REGEX REPLACE "^L([0-9]+)\\..*" "\\1" k ${stage})
    if(k LESS_EQUAL n)
      list(APPEND stages ${stage})
    endif()
  endforeach()
  set(injected)
  set(tests)
  set(verdicts)
  set(codes)
  foreach(code IN LISTS KD_CONFORMANCE_FAILING_CODES)
    foreach(stage IN LISTS stages)
      list(APPEND injected "Verdict: ${code} .* at stage ${stage} .injected fault ")
      list(APPEND tests "${code} at ${stage}")
      list(APPEND verdicts "Verdict: ${code} .* at stage ${stage}")
    endforeach()
    list(APPEND injected "Verdict: ${code} .*.injected fault ")
    list(APPEND codes "Verdict: ${code} ")
  endforeach()
  set(${out} ${injected} ${tests} ${verdicts} ${codes} PARENT_SCOPE)
endfunction()

set(kd_chains 1)
if(KD_CONFORMANCE_DEVICE STREQUAL "cuda")
  set(kd_chains ${KD_CONFORMANCE_GPUS})
endif()
set(kd_shared_fixtures)  # of the layers that need no GPU: run once, required by every chain
foreach(kd_chain RANGE 1 ${kd_chains})
  set(kd_required ${kd_shared_fixtures})
  foreach(kd_id IN LISTS kd_layers)
    set(kd_gpu OFF)
    if(KD_CONFORMANCE_DEVICE STREQUAL "cuda" AND NOT kd_id STREQUAL "L1")  # L1 only loads LibTorch
      set(kd_gpu ON)
    endif()
    set(kd_name conformance.${kd_id})
    if(kd_gpu AND kd_chain GREATER 1)
      set(kd_name conformance.${kd_id}.chain${kd_chain})
    elseif(NOT kd_gpu AND kd_chain GREATER 1)
      continue()  # already added by the first chain
    endif()
    add_test(${kd_name} "${KD_CONFORMANCE_RUN_LAYER}" "${KD_CONFORMANCE_BIN}" ${kd_id} ${KD_CONFORMANCE_DEVICE})
    kd_verdict_regexes(${kd_id} kd_verdict)
    set_tests_properties(${kd_name} PROPERTIES FAIL_REGULAR_EXPRESSION "${kd_verdict}")
    set(kd_labels conformance layer:${kd_id})
    if(kd_gpu)
      list(INSERT kd_labels 1 gpu)
      set_tests_properties(${kd_name} PROPERTIES RESOURCE_GROUPS gpus:1)
    else()
      list(APPEND kd_shared_fixtures kd.${kd_name})
    endif()
    set_tests_properties(${kd_name} PROPERTIES LABELS "${kd_labels}" FIXTURES_SETUP kd.${kd_name}
                                               FIXTURES_REQUIRED "${kd_required}" TIMEOUT 150)
    list(APPEND kd_required kd.${kd_name})
  endforeach()
endforeach()
