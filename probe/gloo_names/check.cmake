# Fails the build when the probe defines any Gloo-related code of its own (see README.md): with
# declarations only, a GlooStore vtable or method emitted here would be built from them.
execute_process(COMMAND ${NM} -C --defined-only ${LIB} OUTPUT_VARIABLE symbols ERROR_QUIET)
string(REGEX MATCHALL "[^\n]*(GlooStore|gloo::)[^\n]*" found "${symbols}")
if(found)
  list(GET found 0 first)
  message(FATAL_ERROR "libkd_probe defines Gloo code built from probe/gloo_names' declarations: ${first}")
endif()
