// See CMakeLists.txt: the entry point the diagnostic looks up calls a function nobody defines.
extern "C" const void* kd_symbol_no_library_defines();

extern "C" __attribute__((visibility("default"))) const void* kd_probe_get() { return kd_symbol_no_library_defines(); }
