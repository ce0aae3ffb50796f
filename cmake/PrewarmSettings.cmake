# Cross-cutting compile settings as INTERFACE targets, linked PRIVATE by every
# target, so nothing leaks through global flags.
add_library(prewarm_settings INTERFACE)
target_compile_features(prewarm_settings INTERFACE cxx_std_23)
set(CMAKE_CXX_EXTENSIONS OFF)
target_compile_definitions(prewarm_settings INTERFACE _FILE_OFFSET_BITS=64)

add_library(prewarm_warnings INTERFACE)
target_compile_options(prewarm_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                            -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
                            -Wimplicit-fallthrough>)
# PREWARM_WERROR makes warnings errors for the product code (runtime/,
# prewarm/, kernels/, manifests/: see prewarm_enable_werror()); tests and
# benchmarks keep the warnings but do not fail on them.
function(prewarm_enable_werror)
  if(PREWARM_WERROR)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
