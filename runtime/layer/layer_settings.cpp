// SPDX-License-Identifier: Apache-2.0
#include "layer/layer_settings.hpp"

#include "layer/layer_log.hpp"

#include <cstdlib>
#include <string_view>

namespace prewarm::layer {
namespace {

std::string_view
variable(const char* name)
{
  const char* value = std::getenv(name);
  return value == nullptr ? std::string_view{} : std::string_view(value);
}

LayerSettings
read_settings()
{
  LayerSettings s;
  const auto mode = variable("PREWARM_LAYER");
  if (mode == "record") {
    s.mode = LayerMode::record;
  } else if (mode == "serve") {
    s.mode = LayerMode::serve;
  } else if (mode == "audit") {
    s.mode = LayerMode::audit;
  }
  s.store = std::string(variable("PREWARM_PROGRAM_STORE"));
  s.audit_log = std::string(variable("PREWARM_LAYER_AUDIT_LOG"));
  if (const auto capture = variable("PREWARM_LAYER_CAPTURE"); !capture.empty()) {
    s.capture_after_build = capture.find("build") != std::string_view::npos;
    s.capture_at_release = capture.find("release") != std::string_view::npos;
    s.capture_at_exit = capture.find("exit") != std::string_view::npos;
    s.capture_explicit = true;
  }
  return s;
}

} // namespace

const LayerSettings&
settings()
{
  // Leaked on purpose: the layer may be called from other libraries' static
  // destructors, after ours would have run.
  static const LayerSettings* const s = [] {
    auto* read = new LayerSettings(read_settings());
    if (read->mode != LayerMode::off && read->store.empty()) {
      read->mode = LayerMode::off;
      operator_line("PREWARM_LAYER is set but PREWARM_PROGRAM_STORE is not: passing every call through");
    }
    return read;
  }();
  return *s;
}

} // namespace prewarm::layer
