// SPDX-License-Identifier: Apache-2.0
// One record of the program store: its key and its two files. No OpenCL call
// is made here, so the OpenCL layer (runtime/layer) and the engine's
// ProgramStore read and write the same format.
//
// Key (ProgramKey::canonical_text(), one "name value" line each, in this order):
//   format 1
//   source-sha256 <64 lowercase hex>      (SHA-256 of the OpenCL C source or the IL)
//   source-kind source|il
//   options <build options, verbatim>
//   platform <CL_PLATFORM_NAME>
//   platform-version <CL_PLATFORM_VERSION>
//   device <CL_DEVICE_NAME>
//   device-version <CL_DEVICE_VERSION>
//   driver <CL_DRIVER_VERSION>
//   vendor <nvidia|intel|amd|cpu>
//   <name> <value>                        (zero or more ProgramKey::extra fields, in
//                                          the order given; the OpenCL layer's spec
//                                          constants, headers, ICD identity, stage)
// key = lowercase hex SHA-256 of that text. Newlines inside a value are
// written as "\n" so a value cannot forge another line.
//
// Layout:
//   STORE/<first 2 hex of key>/<key>.bin   CL_PROGRAM_BINARIES of the one device
//   STORE/<first 2 hex of key>/<key>.meta  the canonical key text, then
//                                          "binary-sha256 <hex>\n"
//   STORE/<first 2 hex of key>/<key>.source  optional: the OpenCL C source the
//                                          key hashes (the layer writes it when
//                                          recording, so the builder can compile
//                                          it ahead of time for absent targets)
// On load the key text must match byte for byte and the binary's SHA-256
// must match before the driver sees a byte of it (a driver handed a
// truncated binary may crash rather than fail); any difference is
// Outcome::rejected, and the program is built from source.
// Both files are written with write_file_atomic (.bin first, then .meta); a
// reader racing a writer sees a digest mismatch at worst, never a torn file.
#pragma once

#include "base/error.hpp"
#include "opencl/device.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prewarm::store {

inline constexpr int k_store_format = 1;

enum class SourceKind { source, il };

// The device half of a key: what the OpenCL runtime says of the device it
// built on. The layer's DeviceIdentity is these plus the ICD it came from.
struct DeviceFields
{
  std::string platform;
  std::string platform_version;
  std::string device;
  std::string device_version;
  std::string driver;
  std::string vendor;
};

struct ProgramKey : DeviceFields
{
  std::string source_sha256;
  SourceKind source_kind = SourceKind::source;
  std::string options;
  // Written after vendor, in this order, only when present: keys made
  // without them are unchanged.
  std::vector<std::pair<std::string, std::string>> extra;

  // Fills the device half from a DeviceRef's properties.
  static ProgramKey for_device(const opencl::DeviceRef& device,
                               std::string_view source,
                               std::string_view options,
                               SourceKind kind = SourceKind::source);

  std::string canonical_text() const;
  std::string digest() const; // the store key
};

std::filesystem::path record_binary_path(const std::filesystem::path& store, std::string_view key);
std::filesystem::path record_meta_path(const std::filesystem::path& store, std::string_view key);
std::filesystem::path record_source_path(const std::filesystem::path& store, std::string_view key);

// The stored binary for `key`, checked: the meta text must start with the
// key's canonical text and name the binary's SHA-256. An absent record is
// Errc::failed E_STORE_ABSENT; anything else wrong is Errc::verify
// (E_STORE_META, E_STORE_DIGEST).
Result<std::string> read_record(const std::filesystem::path& store, const ProgramKey& key);

// Writes the binary, then the meta (see the layout above); `source` is
// written first when not empty.
Status write_record(const std::filesystem::path& store,
                    const ProgramKey& key,
                    std::string_view binary,
                    std::string_view source = {});

// A program source the OpenCL layer recorded (a <key>.source beside its
// meta): what the builder compiles ahead of time for absent Intel targets
// (prewarm/aot/recorded_programs.hpp). Only whole builds of OpenCL C
// (stage build, source-kind source) are listed: a separate compile's object
// and an IL program have no OpenCL C that ocloc could build alone.
struct RecordedSource
{
  std::string key;     // the record's store key (the first one recorded for it)
  std::string source;  // the OpenCL C, as the application passed it
  std::string options; // its build options, verbatim
};

// Every recorded source in `store`, once per distinct (source, options), in
// key order. A .source whose meta is missing or does not hash to it is
// skipped (a record being written, or damage): it is a program the build
// cannot vouch for. An absent store is an empty list.
Result<std::vector<RecordedSource>> recorded_sources(const std::filesystem::path& store);

} // namespace prewarm::store
