# prewarm_embed_files(TARGET NAMESPACE ns FILES a.cl b.cl ... [INCLUDES x.clh ...])
#
# Compiles text files into a static library that exposes
#   std::span<const prewarm::EmbeddedFile> ns::embedded_files();
# so the binaries carry their kernels and default manifests, while the same
# files stay readable in the source tree. The generated source is rebuilt when
# any input changes. INCLUDES: files of the same folder that the FILES name
# with `#include "x.clh"`, expanded into the embedded text (embed_files.cmake).
set(PREWARM_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/embed_files.cmake")

function(prewarm_embed_files target)
  cmake_parse_arguments(ARG "" "NAMESPACE" "FILES;INCLUDES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cpp")
  set(inputs "")
  foreach(f IN LISTS ARG_FILES)
    list(APPEND inputs "${CMAKE_CURRENT_SOURCE_DIR}/${f}")
  endforeach()
  string(REPLACE ";" "|" inputs_arg "${inputs}")
  set(include_args "")
  set(included "")
  if(ARG_INCLUDES)
    set(include_args "-DINCLUDE_DIR=${CMAKE_CURRENT_SOURCE_DIR}")
    foreach(f IN LISTS ARG_INCLUDES)
      list(APPEND included "${CMAKE_CURRENT_SOURCE_DIR}/${f}")
    endforeach()
  endif()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${out}" "-DNAMESPACE=${ARG_NAMESPACE}"
            "-DINPUTS=${inputs_arg}" ${include_args} -P "${PREWARM_EMBED_SCRIPT}"
    DEPENDS ${inputs} ${included} "${PREWARM_EMBED_SCRIPT}"
    COMMENT "Embedding ${target} files"
    VERBATIM)
  add_library(${target} STATIC "${out}")
  target_link_libraries(${target} PUBLIC prewarm::base PRIVATE prewarm_settings)
  add_library(prewarm::${target} ALIAS ${target})
endfunction()
