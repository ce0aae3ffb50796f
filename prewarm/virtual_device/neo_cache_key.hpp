// SPDX-License-Identifier: Apache-2.0
// The name NEO (Intel compute-runtime 26.27.39122) gives a compiler-cache
// entry, computed from the entry's key inputs, and the reader of the key
// trace NEO writes beside each entry with BinaryCacheTrace=1. One owner of
// NEO's key: synthesis (neo_synthesis.hpp) names entries with it, the tests
// check it against names NEO wrote. NEO source, tag 26.27.39122.14:
//
// NEO::Hash (shared/source/helpers/hash.h:27-101): state a=0x428a2f98,
// hi=0x71374491, lo=0xb5c0fbcf. Each update(buf, size) stands alone: every
// whole 4-byte little-endian word is XORed into a, then HASH_JENKINS_MIX(a,
// hi, lo); a 1-3 byte tail b0 b1 b2 becomes b0<<8, b0<<16|b1<<8 or
// b0<<24|b1<<16|b2<<8, XORed in and mixed. finish() = hi<<32 | lo. So the
// split of the input into calls is part of the name.
//
// getCachedFileName (shared/source/compiler_interface/compiler_cache.cpp:31-65)
// updates, in this order ("----" is the 4-byte separator, no lengths):
//   ---- igcRevision (no NUL) libSize (u64 LE) libMTime (i64 LE)
//   ---- input ---- options ---- internalOptions ---- specIds specValues
//   ---- PLATFORM (32 raw bytes: 5 x i32 product, PCH, display core, render
//        core, platform type; 4 x u16 device id, revision, PCH id, PCH rev;
//        i32 GT type) ---- decimal text of Hash(featureTable.packed, 8 bytes)
//   ---- decimal text of Hash(workaroundTable.packed, 4 bytes) ---- ipVersion (u32 LE)
// and prints the result as 16 lowercase hex digits. input: the OpenCL C
// source with its NUL when the source has no #include (direct mode,
// compiler_interface.cpp:70-79), else the front end's SPIR-V with the spec
// constants (preProcess mode, l.137-144). The options carry no NUL.
//
// Entry path (compiler_cache.cpp:141-149, maxCacheDepth 2 in compiler_cache.h):
//   <cache dir>/<name[0]>/<name[1]>/<name>.cl_cache   (OpenCL)
//                                       .l0_cache    (Level Zero)
//
// Trace grammar (<name>.trace, compiler_cache.cpp:67-120; <name>.input holds
// the hashed input bytes exactly):
//   ---- igcRevision ----\n <revision, "(null)" when empty>\n
//     libSize=<u64>\n   libMTime=<u64>\n
//   ---- input ----\n <path of .input>\n
//   ---- options ----\n <options>\n
//   ---- internal options ----\n <internal options>\n
//   ---- specialization constants ----\n specIds=<hex>\n specValues=<hex>\n
//     (each byte as printf %02x of a signed char: 2 digits below 0x80,
//     "ffffffXX" from 0x80)
//   ---- platform ----\n   <field>=<decimal>\n for the 10 PLATFORM fields
//   ---- feature table ----\n <8 bytes as "xx.">\n
//   ---- workaround table ----\n <4 bytes as "xx.">\n
// The trace omits ipVersion: the reader's caller supplies it.
#pragma once

#include "base/error.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::virtual_device::neo {

// NEO::Hash, byte for byte.
class NeoHash
{
public:
  void update(std::span<const std::uint8_t> bytes);
  void update(std::string_view text);
  std::uint64_t finish() const { return (std::uint64_t{m_hi} << 32) | m_lo; }
  static std::uint64_t of(std::span<const std::uint8_t> bytes);

private:
  void mix_in(std::uint32_t word);
  std::uint32_t m_a = 0x428a2f98;
  std::uint32_t m_hi = 0x71374491;
  std::uint32_t m_lo = 0xb5c0fbcf;
};

// gmmlib's PLATFORM as NEO hashes it (igfxfmid.h).
struct Platform
{
  std::int32_t product_family = 0;
  std::int32_t pch_product_family = 0;
  std::int32_t display_core_family = 0;
  std::int32_t render_core_family = 0;
  std::int32_t platform_type = 0;
  std::uint16_t device_id = 0;
  std::uint16_t revision = 0;
  std::uint16_t device_id_pch = 0;
  std::uint16_t revision_pch = 0;
  std::int32_t gt_type = 0;
  std::array<std::uint8_t, 32> bytes() const;
  bool operator==(const Platform&) const = default;
};

// hwInfo.ipVersion: arch<<22 | release<<14 | revision.
struct IpVersion
{
  std::uint32_t architecture = 0;
  std::uint32_t release = 0;
  std::uint32_t revision = 0;
  std::uint32_t value() const { return (architecture << 22) | (release << 14) | revision; }
  std::string text() const; // "20.1.0"
  static Result<IpVersion> parse(std::string_view dotted);
  bool operator==(const IpVersion&) const = default;
};

enum class CacheApi { opencl, level_zero };
std::string_view entry_extension(CacheApi api); // ".cl_cache", ".l0_cache"

struct KeyInputs
{
  std::string igc_revision; // empty: NEO 26.27's IGC reports none ("(null)" in the trace)
  std::uint64_t igc_lib_size = 0;
  std::int64_t igc_lib_mtime = 0;
  std::string input; // the hashed bytes (.input)
  std::string options;
  std::string internal_options;
  std::string spec_ids;
  std::string spec_values;
  Platform platform;
  std::array<std::uint8_t, 8> feature_table{};    // FeatureTable::packed
  std::array<std::uint8_t, 4> workaround_table{}; // WorkaroundTable::packed
  IpVersion ip_version;
};

// getCachedFileName(): 16 lowercase hex digits.
std::string cached_file_name(const KeyInputs& inputs);
// "<h0>/<h1>/<name><extension>", relative to the cache directory.
std::string cached_file_path(std::string_view name, CacheApi api);

// One entry NEO traced: its name (the trace's file name) and key inputs.
struct TracedEntry
{
  std::string name;
  KeyInputs inputs; // ip_version: as given to the reader
};

// Reads DIR/<name>.trace and DIR/<name>.input. Errors name the file and the
// line or field that does not parse.
Result<TracedEntry> read_traced_entry(const std::filesystem::path& trace_file, IpVersion ip_version);
// Every *.trace directly under `cache_dir`, sorted by name.
Result<std::vector<TracedEntry>> read_traced_entries(const std::filesystem::path& cache_dir, IpVersion ip_version);

// The first field that differs between two key inputs ("internal options",
// "platform.usRevId", "ipVersion"...), empty when none does.
std::string first_difference(const KeyInputs& a, const KeyInputs& b);

} // namespace prewarm::virtual_device::neo
