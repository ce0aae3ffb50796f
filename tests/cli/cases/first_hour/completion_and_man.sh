# `cmake --install` installs a bash completion and man pages (one per program
# and one per subcommand) for both
# programs, generated from their CLI definitions; the completion completes
# subcommands and each subcommand's options.
cmake --install "$PREWARM_BUILD_DIR" --prefix inst >/dev/null || exit 1
cd inst/share || exit 1
LC_ALL=C ls bash-completion/completions man/man1
grep -c '^\.SH' man/man1/prewarm.1 | awk '$1 >= 3 { print "prewarm.1 has sections" }'
grep -q 'build' man/man1/prewarm.1 && grep -q 'install' man/man1/prewarm-runtime.1 && echo "the pages list the subcommands"
export FN
complete_words() {
  bash -c 'complete() { :; }; source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$FN"; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$@"
}
FN=_prewarm complete_words bash-completion/completions/prewarm prewarm bu
FN=_prewarm complete_words bash-completion/completions/prewarm prewarm build --ke
FN=_prewarm complete_words bash-completion/completions/prewarm prewarm build --show
FN=_prewarm_runtime complete_words bash-completion/completions/prewarm-runtime prewarm-runtime inst
FN=_prewarm_runtime complete_words bash-completion/completions/prewarm-runtime prewarm-runtime install --on
