// SPDX-License-Identifier: Apache-2.0
// Reproducible PoCL caches. PoCL compiles a program from a temporary file it
// names with mkostemps("<cache dir>/tempfile_XXXXXX", ".cl"), and that name
// ends up in the cached program.bc (the module's source file name) and in the
// program binaries prewarm's store keeps: with glibc's random names, two
// builds of one manifest differ in those bytes.
//
// This executable defines mkostemps and exports it (CMakeLists.txt:
// --export-dynamic-symbol), so the OpenCL drivers it loads call this one.
// In a built-in job (`prewarm run-job`, which the builder starts in a fresh
// staging directory with PREWARM_DETERMINISTIC_TEMPNAMES=1) the names come
// from a per-process counter, in creation order, still created O_EXCL;
// everywhere else the call goes to glibc's.
#include <dlfcn.h>
#include <fcntl.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using Mkostemps = int (*)(char*, int, int);

bool
deterministic_names_requested()
{
  static const bool requested = [] {
    const char* value = std::getenv("PREWARM_DETERMINISTIC_TEMPNAMES");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return requested;
}

int
counted_tempfile(char* name, int suffix_length, int flags)
{
  constexpr std::size_t k_placeholder = 6; // "XXXXXX", as mkstemp requires
  const std::size_t length = std::strlen(name);
  if (suffix_length < 0 || length < k_placeholder + static_cast<std::size_t>(suffix_length)) {
    errno = EINVAL;
    return -1;
  }
  char* placeholder = name + length - static_cast<std::size_t>(suffix_length) - k_placeholder;
  if (std::strncmp(placeholder, "XXXXXX", k_placeholder) != 0) {
    errno = EINVAL;
    return -1;
  }
  static std::atomic<unsigned> counter{0};
  for (;;) {
    const unsigned number = ++counter;
    if (number > 999999) {
      errno = EEXIST;
      return -1;
    }
    char digits[k_placeholder + 1];
    std::snprintf(digits, sizeof digits, "%06u", number);
    std::memcpy(placeholder, digits, k_placeholder);
    const int fd = ::open(name, O_RDWR | O_CREAT | O_EXCL | flags, 0600);
    if (fd >= 0 || errno != EEXIST) {
      return fd;
    }
  }
}

} // namespace

// The symbol is spelled out: with _FILE_OFFSET_BITS=64 <stdlib.h> renames a
// declaration of mkostemps to mkostemps64, which no driver calls.
extern "C" int prewarm_mkostemps(char* name, int suffix_length, int flags) __asm__("mkostemps");

extern "C" int
prewarm_mkostemps(char* name, int suffix_length, int flags)
{
  if (deterministic_names_requested()) {
    return counted_tempfile(name, suffix_length, flags);
  }
  static const auto glibc = reinterpret_cast<Mkostemps>(::dlsym(RTLD_NEXT, "mkostemps"));
  if (glibc == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return glibc(name, suffix_length, flags);
}
