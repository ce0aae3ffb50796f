# prewarm_include_root(<target> <prefix> [DIRECTORY <dir>])
#
# Gives a builder target an include root of its own, so that a header of a
# layer the target does not link fails to compile instead of compiling by
# accident. The root is a directory in the build tree,
#   ${CMAKE_BINARY_DIR}/include_roots/<target>/<prefix>/<name>.hpp,
# holding a symbolic link to each header directly in <dir> (default: the
# calling CMakeLists.txt's directory; subdirectories are other targets').
# It is a PUBLIC include directory: "<prefix>/<name>.hpp" resolves in the
# target itself and in whatever links it, transitively through CMake's usage
# requirements, and nowhere else. Call it once per prefix; a target may have
# several (prewarm_device: store/, level_zero/, opencl/). ARCHITECTURE.md
# ("Include roots") says why links rather than a header tree per layer.
function(prewarm_include_root target prefix)
  cmake_parse_arguments(ARG "" "DIRECTORY" "" ${ARGN})
  if(NOT ARG_DIRECTORY)
    set(ARG_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  set(root "${CMAKE_BINARY_DIR}/include_roots/${target}")
  # Kept in step on every configure without touching links that are right (a
  # configure may run while something compiles): a header removed from <dir>
  # loses its link; CONFIGURE_DEPENDS re-globs when one is added.
  file(MAKE_DIRECTORY "${root}/${prefix}")
  file(GLOB headers CONFIGURE_DEPENDS "${ARG_DIRECTORY}/*.hpp")
  file(GLOB links LIST_DIRECTORIES false "${root}/${prefix}/*")
  set(wanted "")
  foreach(header IN LISTS headers)
    get_filename_component(name "${header}" NAME)
    list(APPEND wanted "${root}/${prefix}/${name}")
    set(current "")
    if(IS_SYMLINK "${root}/${prefix}/${name}")
      file(READ_SYMLINK "${root}/${prefix}/${name}" current)
    endif()
    if(NOT current STREQUAL header)
      file(REMOVE "${root}/${prefix}/${name}")
      file(CREATE_LINK "${header}" "${root}/${prefix}/${name}" SYMBOLIC)
    endif()
  endforeach()
  foreach(link IN LISTS links)
    if(NOT link IN_LIST wanted)
      file(REMOVE "${link}")
    endif()
  endforeach()
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${root}>")
endfunction()
