// SPDX-License-Identifier: Apache-2.0
// The bundle manifest: the one signed statement of what a bundle holds and for
// which hosts. It is defined here, by its reader; the builder writes it with
// serialize() and nothing else.
//
// Bundle directory layout:
//   BUNDLE/manifest            canonical text below (the signed bytes)
//   BUNDLE/manifest.sig        signature envelope (signature.hpp)
//   BUNDLE/slices/<id>.tar.zst one payload per slice (pax tar + zstd)
//
// Grammar (format version 1). Every line ends in LF; no CR, tab, trailing or
// double space, or byte outside printable ASCII. There is exactly one valid
// encoding of any manifest: parse() accepts bytes only if serialize(parse(b))
// reproduces them, so unknown keys, reordering and duplicates are rejected.
//
//   manifest     := header slice+
//   header       := "prewarm-bundle 1" LF
//                   "channel " NAME LF                 e.g. "default", "prod/llm"
//                   "serial " U64 LF                   monotonic per channel
//                   "issued-at " TIME LF               RFC 3339 UTC, seconds
//                   "expires " TIME LF                 > issued-at
//                   "producer " TEXT LF                tool + library versions
//                   "build-manifest " SHA256 LF        digest of the YAML manifest
//   slice        := "slice " ID LF                     ids strictly increasing
//                   "payload " SHA256 " " U64 " " U64 " " U64 LF
//                                  (digest, size of .tar.zst, sum of file sizes, entries)
//                   ("require " KEY " " OP " " VALUE LF)*   sorted by (key, op, value)
//                   ("site-packages " APATH LF)*       sorted; where the build found the
//                                                      application's frameworks (a slice
//                                                      requiring framework.*): the
//                                                      installer reads their versions there
//                                                      (host/framework_probe.hpp)
//                   ("job " TEXT LF)*                  jobs that filled it, sorted
//                   ("cache " CNAME " " VAR [" " SEP " " FLAG] LF)*   custom caches, sorted
//                                                      by CNAME; each has "dir custom/CNAME";
//                                                      with SEP and FLAG, the directory is
//                                                      the flag KEY=DIR among VAR's flags
//                                                      (custom_cache.hpp)
//                   ("env " VAR " " VALUE LF)*         runtime environment, sorted by VAR
//                   ("dir " PATH LF)*                  sorted
//                   ("file " SHA256 " " U64 " " MODE " " PATH LF)*   sorted by path
//                   ("link " PATH " " TARGET LF)*      sorted by path
//   ID           := [a-z0-9][a-z0-9._-]{0,127}
//   NAME         := [A-Za-z0-9][A-Za-z0-9._/-]{0,127}
//   KEY          := [a-z0-9][a-z0-9.-]*                known keys only (requirement.hpp)
//   OP           := "==" | ">=" | "<" | "in"           "in": VALUE is a comma list
//   VALUE, TEXT  := printable ASCII, no leading/trailing space, 1..1024 bytes
//   MODE         := "0644" | "0755"
//   PATH         := KIND "/" REL                       KIND: cache_kind.hpp names, or
//                 | "custom/" CNAME "/" REL            a declared custom cache
//   CNAME        := [a-z0-9][a-z0-9._-]{0,63}          no built-in kind name (custom_cache.hpp)
//   VAR          := [A-Za-z_][A-Za-z0-9_]{0,127}       not denied (runtime_variable.hpp)
//   SEP          := "comma" | "space"                 what separates VAR's flags
//   FLAG         := KEY "={dir}"                       KEY: one or two '-', then [A-Za-z0-9_.-]
//   REL          := COMPONENT ("/" COMPONENT)*         depth <= 32, length <= 1024
//   COMPONENT    := 1..255 bytes of printable UTF-8 (no control character,
//                   no "/"), except "." and ".."
//   TARGET       := ("../")* COMPONENT ("/" COMPONENT)*   relative to the
//                   link's directory, length <= 1024; it must resolve
//                   (lexically) to a file line of the same slice inside the
//                   link's own tree (KIND, or custom/CNAME): no absolute
//                   target, no climb out of the tree, no link to a directory,
//                   to another link or to nothing
//   APATH        := "/" COMPONENT ("/" COMPONENT)*   absolute, length <= 1024,
//                   percent-encoded as PATH is; at most 8 per slice
//   SHA256       := 64 lowercase hex
//
// PATH and TARGET are written percent-encoded (encode_entry_path()): bytes of
// [A-Za-z0-9._+-] and "/" as they are, every other byte as "%XX" (uppercase
// hex), so that a line stays printable ASCII without spaces and a name has
// one spelling ("AMD EPYC" is "AMD%20EPYC"). Every path of the bundles written
// before links and other names were carried is its own encoding, so they read
// as they did. The same spelling names the entries of the slice's tar stream.
//
// A custom cache VAR and an env VAR are distinct within a slice; `env` and
// `exec` export a slice's env lines and cache variables only while that slice
// is installed. A denied VAR fails parse() with E_DENIED_VARIABLE, so a
// validly signed bundle cannot make the runtime export it.
//
// Entries count = dirs + files + links. A dir line exists for every directory that
// holds an entry (parents before children, by sort order), kinds included.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/entry_path.hpp" // the PATH and TARGET rules

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::bundle {

inline constexpr std::string_view k_manifest_file = "manifest";
inline constexpr std::string_view k_signature_file = "manifest.sig";
inline constexpr std::string_view k_slices_dir = "slices";
inline constexpr std::string_view k_slice_suffix = ".tar.zst";

struct Requirement
{
  std::string key;   // "opencl.device", "nvidia.driver", "pci-id", ...
  std::string op;    // "==", ">=", "<", "in"
  std::string value;
  auto operator<=>(const Requirement&) const = default;
};

struct FileEntry
{
  std::string path; // "<kind>/<relative path>"
  std::string sha256;
  std::uint64_t size = 0;
  unsigned mode = 0644;
  auto operator<=>(const FileEntry&) const = default;
};

// A symbolic link inside a cache (darktable finds each OpenCL binary through
// one): installed as a link, never followed by the installer.
struct LinkEntry
{
  std::string path;   // "<kind>/<relative path>", as FileEntry::path
  std::string target; // relative to the link's directory, as the link holds it
  auto operator<=>(const LinkEntry&) const = default;
};

struct Slice
{
  std::string id;
  std::string payload_sha256;
  std::uint64_t payload_size = 0;
  std::uint64_t uncompressed_size = 0; // sum of file sizes
  std::uint64_t entry_count = 0;       // dirs + files + links
  std::vector<Requirement> requirements;
  std::vector<std::string> site_packages; // absolute directories, sorted
  std::vector<std::string> jobs;
  std::vector<CustomCache> caches;     // sorted by name
  std::vector<EnvSetting> environment; // runtime_env, sorted by name
  std::vector<std::string> directories;
  std::vector<FileEntry> files;
  std::vector<LinkEntry> links; // sorted by path
  auto operator<=>(const Slice&) const = default;
};

struct BundleManifest
{
  std::string channel = "default";
  std::uint64_t serial = 1;
  SysSeconds issued_at{};
  SysSeconds expires{};
  std::string producer;
  std::string build_manifest_sha256;
  std::vector<Slice> slices;
  auto operator<=>(const BundleManifest&) const = default;
};

// Canonical bytes. Sorts nothing: the caller gives sorted vectors (normalize()).
std::string serialize(const BundleManifest& manifest);

// Sorts every list into canonical order and fills entry_count.
void normalize(BundleManifest& manifest);

// Strict parse of signed bytes. Errors are Errc::verify with code
// E_MANIFEST_FORMAT and name the line number ("manifest:12: ..."), except a
// requirement key this version does not know: E_UNKNOWN_REQUIREMENT, and a
// denied variable: E_DENIED_VARIABLE.
Result<BundleManifest> parse(std::string_view bytes);

// False when the bytes hold no "cache" and no "env" line, so that parse()
// could give no custom cache and no env setting: a reader that wants only
// those (prewarm-runtime env and exec, at every start) skips parsing a
// manifest of thousands of file lines. True says nothing about validity.
bool may_hold_caches_or_environment(std::string_view bytes);

// Limits validate() enforces (a manifest within them still goes through the
// extraction limits of slice_reader.hpp).
inline constexpr std::size_t k_max_slices = 4096;
inline constexpr std::size_t k_max_entries_per_slice = 1'000'000;
inline constexpr std::size_t k_max_requirements_per_slice = 64;
inline constexpr std::size_t k_max_jobs_per_slice = 4096;
inline constexpr std::size_t k_max_site_packages_per_slice = 8;
inline constexpr std::size_t k_max_caches_per_slice = 64;
inline constexpr std::size_t k_max_environment_per_slice = 64;

// Validation shared by parse() and the writer: names, paths (charset,
// depth, length, unique after ASCII case-fold, parent dir listed), kinds,
// requirements (requirement.hpp), expires > issued-at, entry_count and
// uncompressed_size consistent with the lists, limits. Errc::verify
// E_MANIFEST_FORMAT / E_UNKNOWN_REQUIREMENT; the message names slice and path.
Status validate(const BundleManifest& manifest);

} // namespace prewarm::bundle
