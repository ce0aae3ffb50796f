// SPDX-License-Identifier: Apache-2.0
#include "audit/layer_audit_log.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <system_error>

namespace prewarm::audit {

LayerAuditLog
parse_layer_audit_log(std::string_view text)
{
  LayerAuditLog log;
  while (!text.empty()) {
    auto end = text.find('\n');
    const auto line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty()) {
      continue;
    }
    const auto json = nlohmann::json::parse(line, nullptr, false);
    if (!json.is_object() || !json.contains("event") || !json["event"].is_string()) {
      ++log.malformed_lines;
      continue;
    }
    const auto event = json["event"].get<std::string>();
    if (event != "hit" && event != "miss") {
      ++log.malformed_lines;
      continue;
    }
    LayerEvent e;
    e.hit = event == "hit";
    if (json.contains("key") && json["key"].is_string()) {
      e.key = json["key"].get<std::string>();
    }
    if (json.contains("kernels") && json["kernels"].is_array()) {
      for (const auto& k : json["kernels"]) {
        if (k.is_string()) {
          e.kernels.push_back(k.get<std::string>());
        }
      }
    }
    if (json.contains("build_ms") && json["build_ms"].is_number()) {
      e.build_ms = json["build_ms"].get<double>();
    }
    for (auto [name, field] : {std::pair{"stage", &e.stage}, std::pair{"reason", &e.reason}}) {
      if (json.contains(name) && json[name].is_string()) {
        *field = json[name].get<std::string>();
      }
    }
    e.passed_through = !e.hit && json.contains("passed_through") && json["passed_through"].is_boolean() &&
                       json["passed_through"].get<bool>();
    log.events.push_back(std::move(e));
  }
  return log;
}

Result<LayerAuditLog>
read_layer_audit_log(const std::filesystem::path& path)
{
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return LayerAuditLog{};
  }
  PW_ASSIGN_CTX(const auto text, fmt::format("layer audit log {}", in_quotes(path.string())),
                read_file(path.string(), std::uint64_t{256} << 20));
  return parse_layer_audit_log(text);
}

} // namespace prewarm::audit
