// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/job_logs.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"

#include <fmt/format.h>

#include <fstream>

namespace prewarm::bundle_build {

namespace fs = std::filesystem;

fs::path
default_log_dir(const fs::path& bundle)
{
  auto normal = bundle.lexically_normal();
  if (normal.filename().empty()) {
    normal = normal.parent_path();
  }
  return fs::path(normal.string() + ".logs");
}

fs::path
job_log_path(const fs::path& dir, std::string_view job_id)
{
  // Job ids are registry and model names joined by '/', names the manifest
  // grammar keeps free of '/' and "..": a relative path below `dir`.
  std::string relative;
  for (char c : job_id) {
    relative += (c == '\\' || c == '\0') ? '_' : c;
  }
  return dir / fs::path(relative + ".log").lexically_normal();
}

Status
prepare_job_log(const fs::path& file)
{
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) {
    return fail(Errc::failed,
                fmt::format("cannot create the log directory {}: {}", in_quotes(file.parent_path().string()),
                            ec.message()));
  }
  fs::remove(file, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot remove the old log {}: {}", in_quotes(file.string()), ec.message()));
  }
  return {};
}

void
append_to_job_log(const fs::path& file, std::string_view text)
{
  std::ofstream out(file, std::ios::app | std::ios::binary);
  out << text;
  if (!out) {
    log::warn("cannot write to the job log {}", file.string());
  }
}

} // namespace prewarm::bundle_build
