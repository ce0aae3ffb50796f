// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "audit/file_inventory.hpp"
#include "base/encoding.hpp"
#include "base/error.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

namespace prewarm::command {

// The capture, out of reach while the proof runs: its staging and private
// home renamed into a directory no capture path leads to, so a cache that
// names its own files by absolute path (Triton's group files) finds them in
// the copy the proof installed or not at all, as the application will. A
// rename keeps the captured bytes exactly as they will be packed (a copy
// elsewhere would not hide them, and file modes do not stop a build run as
// root). Put back by restore(), or by the destructor on an early return.
class CaptureOutOfReach
{
public:
  static Result<CaptureOutOfReach> hide(const std::filesystem::path& work_dir, std::vector<std::filesystem::path> paths)
  {
    const auto hidden = work_dir / ".capture-hidden-during-proof";
    std::error_code ec;
    if (!std::filesystem::create_directory(hidden, ec) || ec) {
      return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(hidden.string()),
                                            ec ? ec.message() : "it exists already"));
    }
    CaptureOutOfReach out(hidden);
    for (auto& path : paths) {
      const auto to = hidden / path.filename();
      if (::rename(path.c_str(), to.c_str()) != 0) {
        if (errno == ENOENT) {
          continue;
        }
        return fail(Errc::failed, fmt::format("cannot move {} out of the proof's reach: {}", in_quotes(path.string()),
                                              errno_message(errno)));
      }
      out.m_moved.emplace_back(std::move(path), to);
    }
    return out;
  }
  CaptureOutOfReach(CaptureOutOfReach&& other) noexcept
    : m_hidden(std::move(other.m_hidden)), m_moved(std::exchange(other.m_moved, {}))
  {
  }
  CaptureOutOfReach(const CaptureOutOfReach&) = delete;
  CaptureOutOfReach& operator=(const CaptureOutOfReach&) = delete;
  CaptureOutOfReach& operator=(CaptureOutOfReach&&) = delete;
  ~CaptureOutOfReach() { (void)restore(); }

  // Where `original` lies while hidden.
  std::filesystem::path hidden_path(const std::filesystem::path& original) const
  {
    return m_hidden / original.filename();
  }

  // Puts the capture back. Whatever the proof's run created at a hidden
  // path meanwhile (a cache that names its own files by the absolute path
  // they had at the capture: the application will write there too) is
  // recorded in written_into_capture() and removed first: it is the run's
  // output, never the capture's.
  Status restore()
  {
    while (!m_moved.empty()) {
      const auto [original, hidden] = m_moved.back();
      PW_TRY(take_what_was_written(original));
      if (::rename(hidden.c_str(), original.c_str()) != 0) {
        return fail(Errc::failed, fmt::format("cannot move {} back to {}: {}", in_quotes(hidden.string()),
                                              in_quotes(original.string()), errno_message(errno)));
      }
      m_moved.pop_back();
    }
    std::error_code ec;
    std::filesystem::remove(m_hidden, ec);
    return {};
  }

  // The files the proof's run wrote at the capture's own paths, as
  // "<original path>/<relative path>".
  const std::vector<std::filesystem::path>& written_into_capture() const { return m_written; }

private:
  explicit CaptureOutOfReach(std::filesystem::path hidden) : m_hidden(std::move(hidden)) {}

  Status take_what_was_written(const std::filesystem::path& original)
  {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(original, ec))) {
      return {};
    }
    if (std::filesystem::is_directory(std::filesystem::symlink_status(original, ec))) {
      PW_ASSIGN(const auto files, audit::list_files(original));
      for (const auto& file : files) {
        m_written.push_back(original / file);
      }
    } else {
      m_written.push_back(original);
    }
    return remove_tree(original);
  }

  std::filesystem::path m_hidden;
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> m_moved; // original, hidden
  std::vector<std::filesystem::path> m_written;
};

} // namespace prewarm::command
