// SPDX-License-Identifier: Apache-2.0
#include "command/precompile_hook.hpp"

#include "base/embedded_file.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <system_error>

namespace prewarm::command::hook {
std::span<const EmbeddedFile> embedded_files(); // precompile_hook.py, compiled in (CMakeLists.txt)
} // namespace prewarm::command::hook

namespace prewarm::command {

std::string_view
precompile_hook_source()
{
  return hook::embedded_files().front().bytes;
}

Status
write_precompile_hook(const std::filesystem::path& dir)
{
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  }
  return write_file_atomic(dir / "sitecustomize.py", precompile_hook_source(), 0644, Durability::none);
}

void
add_precompile_hook(process::Environment& env, const std::filesystem::path& dir)
{
  const auto existing = env.find("PYTHONPATH");
  env["PYTHONPATH"] = existing != env.end() && !existing->second.empty() ? dir.string() + ":" + existing->second
                                                                         : dir.string();
}

} // namespace prewarm::command
