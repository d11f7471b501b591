// Sanitizer build only (KD_SANITIZE): the options every instrumented program starts with, so
// that the diagnostic run by the e2e tests, the unit tests and the fuzz targets behave alike
// without an environment to pass along (ASAN_OPTIONS/UBSAN_OPTIONS still override them).
// Reports go to files in the build folder, because many tests capture, and expect, a failing
// run's output; the test sanitizer.no_reports fails on any file there.
// allocator_may_return_null: the injected 1 PiB CPU allocation must reach LibTorch as a failed
// malloc (OUT_OF_MEMORY, code 9), as on a real machine, instead of stopping ASan.

extern "C" const char* __asan_default_options() {
  return "log_path=" KD_SANITIZER_REPORTS "/report:allocator_may_return_null=1:detect_stack_use_after_return=1";
}

extern "C" const char* __ubsan_default_options() {
  return "log_path=" KD_SANITIZER_REPORTS "/report:print_stacktrace=1:halt_on_error=1";
}
