// SPDX-License-Identifier: Apache-2.0
// `prewarm build` as one call: the CLI parses its flags into a BuildRequest
// and hands it here. In order, so that a bad input never leaves a partial
// bundle and nothing runs before every input is known good:
//   load and validate the registry, presets and manifest (exit 2)
//   -> decide the bundle header once (bundle_build/bundle_header.hpp)
//   -> --show-config: print every setting and its origin; stop
//   -> check the outputs, the capture root, the keys, the expiry
//   -> probe the host, make the executors (builtin, command, aot, recorded aot)
//   -> run the jobs (bundle_build/build_runner.hpp) into a staging directory
//   -> write the --json report (also when a failed job stops the build),
//      then sign and write the bundle
//      (pack/bundle_writer.hpp) while the staging directory is alive.
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace prewarm::bundle_build {

// What the user asked, as typed (messages name the paths as given).
struct BuildRequest
{
  std::string manifest_file; // empty: the embedded default
  std::vector<std::string> key_files;
  std::string out;
  std::string shard = "1/1";
  int parallel_jobs = 1; // --jobs: how many jobs run at once
  bool keep_going = false;
  std::string channel;      // empty: the manifest's
  std::uint64_t serial = 0; // 0: the manifest's, else the default
  std::string targets_file;
  std::string json_file;
  std::string log_dir; // empty: <out>.logs
  std::string capture_root;
  bool show_config = false;
  bool allow_expired = false; // write a bundle that expires within a day (a warning)
};

// Prints '<manifest sha256>  <BUNDLE>/manifest' on stdout when a bundle is
// written. Errors: usage and manifest problems (Errc::usage), a failed job
// (Errc::failed; under --keep-going after the others are packaged).
Status build_bundle(const BuildRequest& request);

} // namespace prewarm::bundle_build
