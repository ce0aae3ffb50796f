// SPDX-License-Identifier: Apache-2.0
#include "command/precompile_hook.hpp"

#include "base/files.hpp"

#include <fmt/format.h>

#include <system_error>

namespace prewarm::command {

std::string_view
precompile_hook_source()
{
  // atexit handlers run last-registered first: this one, registered before
  // the program imports torch, runs after torch's own (its compile workers
  // are gone by then; saving needs none of them). Only a program that
  // imported torch and still has precompile on pays for the call.
  return R"PY(# Written by prewarm for the capture of a dynamo cache; not shipped.
import atexit
import os
import sys


def _prewarm_save_dynamo_entries():
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        if not torch._dynamo.config.caching_precompile:
            return
        torch.compiler.save_cache_artifacts()
    except Exception as error:  # the warm-up's result stands; the proof shows what is missing
        print("prewarm: Dynamo's precompiled entries were not saved: %s" % error, file=sys.stderr)


atexit.register(_prewarm_save_dynamo_entries)


def _prewarm_chain():
    # Run the sitecustomize this one shadows, as if it were first.
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    for entry in sys.path:
        if os.path.abspath(entry or ".") == here:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


_prewarm_chain()
)PY";
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
