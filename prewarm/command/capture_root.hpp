// SPDX-License-Identifier: Apache-2.0
// Capturing at the final install path (`prewarm build --capture-root PATH`).
//
// Some compilers put a path into the key of what they cache: Triton's key
// for an Inductor kernel includes the path of the generated source under
// TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR (bench/results/
// gpu-h100-hit-proof: 16 of 44 kernels compiled again when installed
// elsewhere). Such a cache hits only where it was made. With a capture root
// the command's cache variables point at PATH/<kind> (and extra caches at
// PATH/custom/<name>), exactly the directories prewarm-runtime uses after
// `install --root PATH` (runtime/install/install_layout.hpp, application_environment.hpp),
// so the keys the program computes at build time are the ones the
// application computes at run time. After the run the capture is moved out
// into the job's work directory as usual; the hit proof runs again at PATH
// (hit_proof.hpp) so its verdict is the one the installed bundle gets.
//
// PATH is the user's: it must be absent or an empty directory (anything
// else is refused, never deleted), and it is left as it was found (absent
// again, or empty) after the job, whether it succeeded, failed, timed out or
// the build was interrupted (the claim's destructor runs on the way out,
// jobs/interruption.hpp). Because PATH is one place, command jobs that capture at
// it run one at a time (command_executor.hpp), and a claim holds an
// exclusive flock on PATH: a second build capturing at the same PATH (both
// found it empty) is refused instead of writing into the first one's caches.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"

#include <filesystem>
#include <string_view>

namespace prewarm::command {

// Errc::usage naming PATH when it is neither absent nor an empty real
// directory, or not absolute. `what` names the setting ("--capture-root").
Status check_capture_root(const std::filesystem::path& path, std::string_view what);

// PATH held for one job: created (with missing parents) if absent and locked
// (flock, released on destruction; Errc::failed E_CAPTURE_ROOT_BUSY when
// another claim holds it); on destruction everything this claim created under
// and above it is removed.
class CaptureRootClaim
{
public:
  static Result<CaptureRootClaim> claim(const std::filesystem::path& path);
  CaptureRootClaim(CaptureRootClaim&& other) noexcept;
  CaptureRootClaim& operator=(CaptureRootClaim&&) = delete;
  CaptureRootClaim(const CaptureRootClaim&) = delete;
  CaptureRootClaim& operator=(const CaptureRootClaim&) = delete;
  ~CaptureRootClaim();

  const std::filesystem::path& path() const { return m_path; }

  // Removes everything under PATH (between the capture and the hit proof).
  Status empty_again() const;

private:
  CaptureRootClaim(std::filesystem::path path, std::filesystem::path created_top, UniqueFd lock)
    : m_path(std::move(path)), m_created_top(std::move(created_top)), m_lock(std::move(lock))
  {
  }

  std::filesystem::path m_path;
  std::filesystem::path m_created_top; // the outermost directory this claim created; empty: PATH existed
  UniqueFd m_lock;                     // PATH, flocked: closed after the removal
};

// Moves the tree `from` to `to` (which must not exist): a rename, or a copy
// and removal where they lie on different file systems.
Status move_tree(const std::filesystem::path& from, const std::filesystem::path& to);

} // namespace prewarm::command
