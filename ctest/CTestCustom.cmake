# Copied into the build folder by ctest/CMakeLists.txt; ctest reads it from there.
# A layer's output ends with its verdict line (code and stage): keep it whole.
set(CTEST_CUSTOM_MAXIMUM_PASSED_TEST_OUTPUT_SIZE 65536)
set(CTEST_CUSTOM_MAXIMUM_FAILED_TEST_OUTPUT_SIZE 262144)
