// SPDX-License-Identifier: Apache-2.0
// The identity of Intel's graphics compiler (IGC) as Intel's driver (NEO)
// hashes it into every key of its compiler cache: IGC's revision, and the
// size and modification time of the libigc.so.2 it loaded (NEO
// compiler_cache.cpp; BinaryCacheTrace=1 prints "igcRevision", "libSize",
// "libMTime"). A NEO cache entry made with another IGC file can only miss, so
// a slice of NEO entries requires this identity (prop::intel_igc), and the
// host side is read here: one stat() of the library the dynamic loader would
// pick, no driver loaded, no device enumerated.
//
// Value: "<size in bytes>:<mtime in seconds>" of the library file (symbolic
// links followed, as NEO's stat is). The revision is left out: Debian's build
// reports none ("(null)"), and a different revision ships as a different file.
// Package managers keep a file's mtime (dpkg and image layers set it from the
// archive), so the same package gives the same identity on every host.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::host {

inline constexpr std::string_view k_igc_library = "libigc.so.2";

// "<size>:<mtime>" of `library`; nullopt when it cannot be stat()ed.
std::optional<std::string> igc_identity_of(const std::filesystem::path& library);

// Where the dynamic loader finds libigc.so.2 for a process with this
// LD_LIBRARY_PATH: its directories first, then the distribution's library
// directories (NEO loads IGC by soname). nullopt: no IGC on this host.
std::optional<std::filesystem::path> find_igc_library(std::string_view ld_library_path,
                                                      const std::filesystem::path& root = "/");

// Both: this host's IGC identity, for the process environment's
// LD_LIBRARY_PATH. nullopt: no IGC installed.
std::optional<std::string> host_igc_identity();

} // namespace prewarm::host
