# prewarm_shell_docs(<program> <one-line description>): the bash completion
# script and the man page of a command-line program, both generated from the
# program's own CLI definitions at build time (so they cannot drift from the
# options it accepts) and installed by `cmake --install`:
#   share/bash-completion/completions/<program>   (`<program> completion bash`)
#   share/man/man1/<program>.1, <program>-<subcommand>.1  (help2man over --help/--version)
include(GNUInstallDirs)
option(PREWARM_MAN_PAGES "Generate man pages with help2man" ON)
if(PREWARM_MAN_PAGES)
  find_program(PREWARM_HELP2MAN help2man)
  if(NOT PREWARM_HELP2MAN)
    message(FATAL_ERROR "help2man not found (apt-get install help2man), or configure with -DPREWARM_MAN_PAGES=OFF")
  endif()
endif()

function(prewarm_shell_docs program description)
  set(completion "${CMAKE_CURRENT_BINARY_DIR}/${program}.bash")
  add_custom_command(OUTPUT "${completion}"
    COMMAND sh -c "\"$0\" completion bash > \"$1\"" "$<TARGET_FILE:${program}>" "${completion}"
    DEPENDS ${program}
    COMMENT "Generating the bash completion of ${program}"
    VERBATIM)
  set(outputs "${completion}")
  install(FILES "${completion}" DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions"
          RENAME "${program}")
  if(PREWARM_MAN_PAGES)
    # One page for the program and one per subcommand (cmake/man_pages.sh).
    set(man_dir "${CMAKE_CURRENT_BINARY_DIR}/man1")
    set(stamp "${CMAKE_CURRENT_BINARY_DIR}/${program}.man.stamp")
    add_custom_command(OUTPUT "${stamp}"
      COMMAND "${CMAKE_COMMAND}" -E rm -rf "${man_dir}"
      COMMAND "${PROJECT_SOURCE_DIR}/cmake/man_pages.sh" "$<TARGET_FILE:${program}>" "${PREWARM_HELP2MAN}" "${man_dir}" "${description}"
      COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
      DEPENDS ${program} "${PROJECT_SOURCE_DIR}/cmake/man_pages.sh"
      COMMENT "Generating the man pages of ${program}"
      VERBATIM)
    list(APPEND outputs "${stamp}")
    install(DIRECTORY "${man_dir}/" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
  endif()
  add_custom_target(${program}_shell_docs ALL DEPENDS ${outputs})
endfunction()
