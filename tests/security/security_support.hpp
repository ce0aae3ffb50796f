// SPDX-License-Identifier: Apache-2.0
// The adversarial suite's harness. Every case runs the real prewarm-runtime
// binary against a cache root that already holds a good install, then checks
// what signing-archives.md §7 calls REJECT / SKIP:
//   - the exit code and the named error code on stderr,
//   - the previous cache byte-identical (tree hash of ROOT, marker and state
//     included),
//   - no staging directory and no "committing" note left,
//   - nothing written outside ROOT (a sentinel tree beside it, hashed).
// Evil bundles are validly signed (the test_only key re-signs every mutated
// manifest), so the check that stops them is the one named, not the
// signature.
#pragma once

#include "bundle/bundle_manifest.hpp"
#include "install_test_support.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace prewarm::security_test {

namespace fs = std::filesystem;
using test::Files;

struct Outcome
{
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& path);
void write_text(const fs::path& path, std::string_view text);

// Runs `command` through sh; stdout/stderr go to files under `work`.
// With `openat2_errno` != 0 the shell (and all it starts) runs under a seccomp
// filter that fails openat2 with that errno; the filter is probed before the
// exec (exit 99 if it does not bite).
Outcome run_shell(const fs::path& work, const std::string& command, int openat2_errno = 0);

class Security : public ::testing::Test
{
protected:
  void SetUp() override;

  // prewarm-runtime install BUNDLE --trust TRUST --root ROOT EXTRA
  Outcome install(const fs::path& bundle, const std::string& extra = "", const fs::path& trust = {});
  Outcome verify(const fs::path& bundle, const std::string& extra = "", const fs::path& trust = {});

  // The bundle the baseline install came from (serial 1) and a newer good one.
  fs::path good_bundle(std::uint64_t serial = 2, std::string channel = "default");

  // Copies a bundle directory so a case can mutate it.
  fs::path copy_bundle(const fs::path& bundle, const std::string& name);

  // Replaces the manifest with `bytes` and signs them with `key` (default
  // the trusted test_only key): the signature is valid for whatever we write.
  void resign(const fs::path& bundle, std::string_view bytes, const pack::PrivateKey* key = nullptr);
  // Parse, mutate, serialize (canonical), resign.
  void edit_manifest(const fs::path& bundle, const std::function<void(bundle::BundleManifest&)>& edit);
  // Writes `payload` (already compressed) as slice `slice_id` and updates the
  // slice's payload digest + size; `edit` may change its entry lists.
  void replace_payload(const fs::path& bundle, std::string_view slice_id, std::string_view payload,
                       const std::function<void(bundle::Slice&)>& edit = {});

  // A policy file with the test_only key and `extra` YAML appended.
  fs::path policy(const std::string& extra, const std::string& name = "policy.yaml");

  // Group D of §7 (38 refused archives + the accepted-with-safe-modes one),
  // each through install() with the REJECT checks; adversarial_test.cpp.
  void evil_archive_cases();

  // REJECT / SKIP checks described at the top of this file.
  void expect_refused(const Outcome& run, int exit_code, const std::string& error_code);
  void expect_untouched();

  // Non-zero: install()/verify() run prewarm-runtime under a seccomp filter
  // that fails openat2(2) with this errno (F54).
  int openat2_errno = 0;

  TempDir dir = test::scratch();
  fs::path work;
  fs::path root;
  fs::path outside; // sentinel tree: never written by any case
  std::unique_ptr<test::BundleFactory> factory;
  fs::path pub;
  std::string host_env;
  fs::path baseline_bundle;
  std::string root_hash_before;
  std::string outside_hash_before;
  int bundle_counter = 0;
};

// The files of the baseline (serial 1) and newer (serial >= 2) bundles.
Files baseline_files();
Files newer_files();

// `command -v TOOL` succeeds (strace, setpriv: tests skip without them).
bool have_tool(const char* tool);

} // namespace prewarm::security_test
