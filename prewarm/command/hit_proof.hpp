// SPDX-License-Identifier: Apache-2.0
// Hit proof: after a command workload's caches were captured, the same
// command runs again in a fresh process against a copy of them laid out as
// they will be installed (VERIFY/staging/<kind>, or PATH/<kind> when the job
// captured at the install root PATH (capture_root.hpp), each kind's variables
// set as the runtime sets them, Triton's group files relocated onto the copy
// as the installer relocates them (audit/triton_groups.hpp)), while
// runtime/audit watches which captured files it reads and compares each file
// with its digest from before the run (new: appeared or changed bytes): the
// copy, the watch and the count are proof_rerun.hpp's, which the virtual
// device's proof shares. The
// caller keeps the original capture out of the proof's reach meanwhile
// (command_job.cpp), so absolute paths into it lead nowhere, as at the
// destination. A bundle that cannot hit is then reported at build time, each
// miss with its evidence or "cause unknown" (miss_diagnosis.hpp):
//   - kernels of the same names under new keys: the first differing field
//     of their metadata or line of a text file of the two entries;
//   - a build-time path or the host name inside a text file of the cache
//     (inside a compiled binary it is no evidence: compilers embed
//     temporary names);
//   - an ignored or reset variable: the re-run wrote a kind's default
//     location under its private home;
//   - a cache outside the captured kinds: the re-run filled directories
//     under its private XDG_CACHE_HOME / HOME (hashcat's kernels) that no kind
//     captures, so the application compiles them again.
// A kind the re-run never touched is a note, not a miss.
//
// Read-only where the kind allows: the copied files are made read-only (every
// kind writes new entries next to old ones, never into them), but the
// directories stay writable: PoCL compiles work-group functions lazily per
// local size into the program's directory (docs/research/interception.md), and
// Triton raises on a miss in a read-only directory (kernel-caches.md §7),
// which would turn a miss into a failed run. CUDA's index file is rewritten
// on every use and stays writable. (A build running as root is not stopped
// by file modes; then nothing is read-only.)
#pragma once

#include "audit/cache_usage.hpp"
#include "base/error.hpp"
#include "bundle/cache_kind.hpp"
#include "command/cache_capture.hpp"
#include "command/custom_capture.hpp"
#include "command/miss_diagnosis.hpp"
#include "command/subprocess.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace prewarm::command {

// Manifest `verify:` of a command model.
//   off      no second run
//   warn     run it; misses are warnings on the job line (default)
//   require  a captured kind that does not hit fails the job, naming it
enum class VerifyMode { off, warn, require };

std::string_view to_string(VerifyMode mode);
std::optional<VerifyMode> parse_verify_mode(std::string_view text);

struct HitProofRequest
{
  std::string job_id;
  SubprocessSpec run;                  // argv, shell, cwd, timeout, log as the capture ran; env set here
  Environment base_environment;        // before redirection (inherited + manifest env)
  std::filesystem::path captured_root; // the capture's staging root: <kind>/...
  std::vector<CacheKind> kinds;        // the kinds the capture redirected
  std::vector<CustomCacheRequest> custom_caches; // the model's extra caches (custom_capture.hpp)
  std::filesystem::path work_dir;      // an empty directory owned by the proof
  // Empty: the copy lies in work_dir. Else the capture root (capture_root.hpp),
  // empty now: the copy lies there, as `install --root` lays it out.
  std::filesystem::path install_root;
  HomeMode home = HomeMode::private_home;
  // Strings the capture's keys must not depend on (its staging root and
  // private home): found in captured files of a kind that missed, they are
  // the cause.
  std::vector<std::string> capture_paths;
};

struct HitProof
{
  SubprocessResult run;
  audit::UsageReport usage;           // captured kinds, and kinds the re-run filled
  std::vector<std::string> causes;    // why kinds missed, with the fix
  std::vector<std::string> uncaptured; // caches outside the captured kinds
  std::vector<WrittenIntoCapture> written_into_capture;

  // Every kind that was captured hit, the re-run succeeded and wrote
  // nothing at the capture's own paths.
  bool hit() const;
  // "pocl: 96 reused, 0 new" for each kind, "; " between.
  std::string line() const;
  // The kinds that missed, one "kind: N new (names)" each, and the writes
  // at the capture's paths, one "kind: wrote N files at the capture's path" each.
  std::vector<std::string> misses() const;
};

// Runs the proof. An error: it could not be set up (copy, watch); a re-run
// that fails is a result with run.succeeded() == false.
Result<HitProof> prove_hits(const HitProofRequest& request);

} // namespace prewarm::command
