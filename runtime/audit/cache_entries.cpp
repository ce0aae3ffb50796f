// SPDX-License-Identifier: Apache-2.0
#include "audit/cache_entries.hpp"

#include "base/files.hpp"
#include "bundle/app_hint.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/custom_cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <system_error>
#include <vector>

namespace prewarm::audit {

namespace fs = std::filesystem;

namespace {

std::vector<std::string_view>
components(std::string_view path)
{
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const auto slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) {
      break;
    }
    path.remove_prefix(slash + 1);
  }
  return parts;
}

std::string
first(const std::vector<std::string_view>& parts, std::size_t n)
{
  std::string out;
  for (std::size_t i = 0; i < n && i < parts.size(); ++i) {
    out += out.empty() ? "" : "/";
    out += parts[i];
  }
  return out;
}

// The kernel names in the metadata JSON files of one Triton entry directory.
std::set<std::string>
triton_kernel_names(const fs::path& entry_dir)
{
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(entry_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto file = it->path().filename().string();
    if (!file.ends_with(".json") || file.starts_with("__grp__")) {
      continue;
    }
    const auto text = read_file(it->path().string(), 1 << 20);
    if (!text) {
      continue;
    }
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_object() && json.contains("name") && json["name"].is_string()) {
      names.insert(json["name"].get<std::string>());
    }
  }
  return names;
}

std::string
joined(const std::set<std::string>& names)
{
  std::string out;
  for (const auto& n : names) {
    out += out.empty() ? "" : ", ";
    out += n;
  }
  return out;
}

std::string
triton_label(const fs::path& entry_dir, std::string_view entry)
{
  const auto names = triton_kernel_names(entry_dir);
  return names.empty() ? fmt::format("entry {}", entry) : fmt::format("kernel {}", joined(names));
}

// The layout of a kind's files (bundle::CacheKindRules::entry_layout). A
// custom cache's files are its entries, named by their paths: its top folder
// (PyTensor's compiledir_Linux-..., onnxruntime's openvino-ep) names the
// cache, not what was reused or rebuilt. Another directory that is no kind is
// grouped by its first component.
bundle::EntryLayout
layout_of(std::string_view kind)
{
  if (!bundle::custom_cache_of(kind).empty()) {
    return bundle::EntryLayout::file;
  }
  const auto* rules = bundle::find_kind_rules(kind);
  return rules == nullptr ? bundle::EntryLayout::top_directory : rules->entry_layout;
}

} // namespace

std::string
entry_of(std::string_view kind, std::string_view relative_path)
{
  using bundle::EntryLayout;
  const auto parts = components(relative_path);
  switch (layout_of(kind)) {
  case EntryLayout::inductor_tree:
    if (!parts.empty() && (parts[0] == "fxgraph" || parts[0] == "aotautograd") && parts.size() >= 4) {
      return first(parts, 3);
    }
    if (!parts.empty() && parts[0] == "triton" && parts.size() >= 4) {
      return first(parts, 3);
    }
    return first(parts, parts.size() > 1 ? 2 : 1);
  case EntryLayout::pocl_program:
    return first(parts, parts.size() >= 3 ? 2 : 1);
  case EntryLayout::program_store:
    if (parts.size() == 2) {
      auto name = std::string(parts[1]);
      if (const auto dot = name.rfind('.'); dot != std::string::npos) {
        name.resize(dot);
      }
      return name;
    }
    return std::string(relative_path);
  // NEO: one file <hash>.cl_cache / .l0_cache / .ocloc_cache is one program;
  // the directories above it only spread files (NEO_CACHE_DIR/<d>/<d>/), so
  // two programs under one directory are two entries. pycache: one .pyc per
  // module, under a mirror of its source's path.
  case EntryLayout::neo_file:
  case EntryLayout::file:
    return std::string(relative_path);
  case EntryLayout::triton:
  case EntryLayout::top_directory:
    break;
  }
  return first(parts, 1);
}

bool
is_bookkeeping_path(std::string_view kind, std::string_view relative_path)
{
  if (!bundle::custom_cache_of(kind).empty()) {
    // an application's own (app_hint.hpp: tinygrad's cache.db-shm)
    return bundle::rewritten_on_every_use(relative_path);
  }
  const auto* rules = bundle::find_kind_rules(kind);
  return rules != nullptr && rules->audit_bookkeeping != nullptr && rules->audit_bookkeeping(relative_path);
}

std::set<std::string>
entry_kernel_names(std::string_view kind, const fs::path& kind_dir, std::string_view entry)
{
  using bundle::EntryLayout;
  const auto layout = layout_of(kind);
  const auto parts = components(entry);
  if (layout == EntryLayout::triton ||
      (layout == EntryLayout::inductor_tree && !parts.empty() && parts[0] == "triton" && parts.size() == 3)) {
    return triton_kernel_names(kind_dir / entry);
  }
  std::set<std::string> kernels;
  if (layout == EntryLayout::pocl_program) {
    std::error_code ec;
    for (fs::directory_iterator it(kind_dir / entry, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (fs::is_directory(it->symlink_status(ec))) {
        kernels.insert(it->path().filename().string());
      }
    }
  }
  return kernels;
}

std::string
entry_label(std::string_view kind, const fs::path& kind_dir, std::string_view entry)
{
  using bundle::EntryLayout;
  switch (layout_of(kind)) {
  case EntryLayout::triton:
    return triton_label(kind_dir / entry, entry);
  case EntryLayout::inductor_tree: {
    const auto parts = components(entry);
    if (!parts.empty() && parts[0] == "dynamo" && parts.size() == 2) {
      return fmt::format("dynamo frame {}", parts[1].substr(0, 16));
    }
    if (!parts.empty() && parts[0] == "triton" && parts.size() == 3) {
      return triton_label(kind_dir / entry, parts[2]);
    }
    if (!parts.empty() && parts[0] == "fxgraph" && parts.size() == 3) {
      return fmt::format("graph {}", parts[2]);
    }
    // aotautograd/<key> (torch 2.11) or aotautograd/<k[1:3]>/<key> (older).
    if (!parts.empty() && parts[0] == "aotautograd" && (parts.size() == 2 || parts.size() == 3)) {
      return fmt::format("aotautograd {}", parts.back());
    }
    return std::string(entry);
  }
  case EntryLayout::pocl_program: {
    const auto kernels = entry_kernel_names(kind, kind_dir, entry);
    const auto short_hash = std::string(entry.substr(0, 12));
    return kernels.empty() ? fmt::format("program {}", short_hash)
                           : fmt::format("program {} [{}]", short_hash, joined(kernels));
  }
  case EntryLayout::program_store:
    return fmt::format("key {}", entry.substr(0, 16));
  case EntryLayout::neo_file: {
    const auto name = fs::path(entry).filename().string();
    const auto dot = name.rfind('.');
    const auto api = name.ends_with(".cl_cache")   ? "OpenCL program"
                     : name.ends_with(".l0_cache") ? "Level Zero module"
                                                   : "program";
    return fmt::format("{} {}", api, name.substr(0, std::min<std::size_t>(dot, 16)));
  }
  case EntryLayout::file:
  case EntryLayout::top_directory:
    break;
  }
  return std::string(entry);
}

} // namespace prewarm::audit
