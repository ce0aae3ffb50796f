// SPDX-License-Identifier: Apache-2.0
#include "audit/cache_usage.hpp"

#include "audit/cache_entries.hpp"
#include "bundle/cache_kind.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <map>

namespace prewarm::audit {

namespace {

constexpr std::size_t k_names_in_summary = 3;

std::vector<NamedEntry>
named(const std::string& kind, const std::filesystem::path& dir, const std::set<std::string>& entries)
{
  std::vector<NamedEntry> out;
  for (const auto& entry : entries) {
    out.push_back(NamedEntry{entry, entry_label(kind, dir, entry), entry_kernel_names(kind, dir, entry)});
  }
  return out;
}

nlohmann::json
optional_number(const std::optional<std::uint64_t>& value)
{
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

} // namespace

bool
KindUsage::hit() const
{
  // A trace is a miss of the dynamo kind, whose precompiled frames exist to
  // spare it, even where every graph it traced hit Inductor's cache.
  return !compiled_anew() && traced_graphs.value_or(0) == 0;
}

bool
KindUsage::compiled_anew() const
{
  return new_files > 0 || layer_misses.value_or(0) > 0;
}

bool
KindUsage::untouched() const
{
  return reused_files && *reused_files == 0 && new_files == 0 && files_before > 0 && !layer_hits;
}

std::string
KindUsage::summary() const
{
  std::string text;
  if (untouched()) {
    return fmt::format("{}: untouched ({} files, none read or changed)", kind, files_before);
  }
  if (reused_files || !layer_hits) {
    text = fmt::format("{}: {} reused, {} new{}", kind, reused_files ? fmt::format("{}", *reused_files) : "?",
                       new_files, rewritten_files > 0 ? fmt::format(" ({} rewritten)", rewritten_files) : "");
  }
  if (traced_graphs.value_or(0) > 0) {
    text += fmt::format(", Dynamo traced {} graph{}", *traced_graphs, *traced_graphs == 1 ? "" : "s");
  }
  if (layer_hits) {
    text += fmt::format("{}{}{} programs served, {} built", text.empty() ? kind : "", text.empty() ? ": " : ", ",
                        *layer_hits, layer_misses.value_or(0));
  }
  if (!new_entries.empty()) {
    std::string names;
    for (std::size_t i = 0; i < new_entries.size() && i < k_names_in_summary; ++i) {
      names += fmt::format("{}{}", i == 0 ? "" : ", ", new_entries[i].label);
    }
    if (new_entries.size() > k_names_in_summary) {
      names += fmt::format(", +{} more", new_entries.size() - k_names_in_summary);
    }
    text += fmt::format(" ({})", names);
  }
  return text;
}

const KindUsage*
UsageReport::find(std::string_view kind) const
{
  for (const auto& k : kinds) {
    if (k.kind == kind) {
      return &k;
    }
  }
  return nullptr;
}

std::string
UsageReport::summary() const
{
  std::string text;
  for (const auto& k : kinds) {
    text += fmt::format("{}{}", text.empty() ? "" : "; ", k.summary());
  }
  if (!complete) {
    text += " (event queue overflowed: reuse counts are lower bounds)";
  }
  return text.empty() ? std::string("no caches") : text;
}

KindUsage
measure_kind(std::string kind, const std::filesystem::path& dir, const FileSet& before, const FileSet& after,
             const KindAccess* access, const FileStates* before_states, bool states_settled)
{
  KindUsage usage;
  usage.kind = std::move(kind);
  usage.dir = dir;
  std::set<std::string> reused_entries;
  std::set<std::string> new_entries;
  std::uint64_t reused = 0;
  std::uint64_t unused = 0;
  for (const auto& file : before) {
    if (is_bookkeeping_path(usage.kind, file)) {
      continue;
    }
    ++usage.files_before;
    const FileState* state = nullptr;
    if (before_states != nullptr) {
      if (const auto it = before_states->find(file); it != before_states->end()) {
        state = &it->second;
      }
    }
    // A file the run did not write is compared by a stat alone: hashing
    // every small file of a large cache after each run would cost the start.
    const auto changed = [&](bool stat_only) {
      return state == nullptr || file_changed(dir, file, *state, states_settled || stat_only);
    };
    if (access == nullptr) {
      // Not watched: only a change measured against a state counts.
      if (state != nullptr && after.contains(file) && file_changed(dir, file, *state, states_settled)) {
        ++usage.new_files;
        ++usage.rewritten_files;
        usage.new_file_paths.push_back(file);
        new_entries.insert(entry_of(usage.kind, file));
      }
      continue;
    }
    const bool written = access->written.contains(file) && after.contains(file);
    // Every file with a state is compared, written or not: one meaning of
    // reused for the proof, this run, since install and status --audit. Against
    // an install's states a file an earlier run rewrote is new since install
    // too, though this run only read it.
    const bool rewritten = written ? changed(false) : state != nullptr && after.contains(file) && changed(true);
    if (rewritten) {
      ++usage.new_files;
      ++usage.rewritten_files;
      usage.new_file_paths.push_back(file);
      new_entries.insert(entry_of(usage.kind, file));
    } else if (after.contains(file) && (written || access->opened.contains(file))) {
      ++reused;
      reused_entries.insert(entry_of(usage.kind, file));
    } else {
      ++unused;
    }
  }
  for (const auto& file : after) {
    if (before.contains(file) || is_bookkeeping_path(usage.kind, file)) {
      continue;
    }
    ++usage.new_files;
    usage.new_file_paths.push_back(file);
    new_entries.insert(entry_of(usage.kind, file));
  }
  if (access != nullptr) {
    usage.reused_files = reused;
    usage.unused_files = unused;
  }
  if (const auto* rules = bundle::find_kind_rules(usage.kind); rules != nullptr && !rules->traced_graph_entries.empty()) {
    std::set<std::string> traced;
    for (const auto* entries : {&reused_entries, &new_entries}) {
      std::ranges::copy_if(*entries, std::inserter(traced, traced.end()), [&](const std::string& entry) {
        return entry.starts_with(rules->traced_graph_entries);
      });
    }
    usage.traced_graphs = traced.size();
  }
  usage.reused_entries = named(usage.kind, dir, reused_entries);
  usage.new_entries = named(usage.kind, dir, new_entries);
  return usage;
}

void
add_layer_events(UsageReport& report, const LayerAuditLog& log)
{
  report.malformed_layer_lines += log.malformed_lines;
  if (log.events.empty()) {
    return;
  }
  const auto layer_kind = bundle::opencl_layer_kind().name;
  auto it = std::find_if(report.kinds.begin(), report.kinds.end(),
                         [&](const KindUsage& k) { return k.kind == layer_kind; });
  if (it == report.kinds.end()) {
    KindUsage programs;
    programs.kind = layer_kind;
    report.kinds.push_back(std::move(programs));
    it = std::prev(report.kinds.end());
  }
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  for (const auto& event : log.events) {
    NamedEntry entry{event.key, "", {event.kernels.begin(), event.kernels.end()}};
    std::string kernels;
    for (const auto& k : event.kernels) {
      kernels += fmt::format("{}{}", kernels.empty() ? "" : ", ", k);
    }
    entry.label = fmt::format("{} key {}{}", event.hit ? "served" : "built",
                              event.key.empty() ? std::string("(none)") : event.key.substr(0, 16),
                              kernels.empty() ? "" : fmt::format(" [{}]", kernels));
    (event.hit ? it->reused_entries : it->new_entries).push_back(std::move(entry));
    ++(event.hit ? hits : misses);
  }
  it->layer_hits = hits;
  it->layer_misses = misses;
}

nlohmann::json
to_json(const KindUsage& usage)
{
  auto entries = [](const std::vector<NamedEntry>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : list) {
      out.push_back({{"entry", e.entry}, {"name", e.label}, {"kernels", e.kernels}});
    }
    return out;
  };
  nlohmann::json out = {
    {"kind", usage.kind},
    {"files_before", usage.files_before},
    {"reused_files", optional_number(usage.reused_files)},
    {"new_files", usage.new_files},
    {"rewritten_files", usage.rewritten_files},
    {"unused_files", optional_number(usage.unused_files)},
    {"hit", usage.hit()},
    {"untouched", usage.untouched()},
    {"reused_entries", entries(usage.reused_entries)},
    {"new_entries", entries(usage.new_entries)},
  };
  if (usage.traced_graphs) {
    out["traced_graphs"] = *usage.traced_graphs;
  }
  if (usage.layer_hits) {
    out["layer_hits"] = *usage.layer_hits;
    out["layer_misses"] = usage.layer_misses.value_or(0);
  }
  return out;
}

nlohmann::json
to_json(const UsageReport& report)
{
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& k : report.kinds) {
    kinds.push_back(to_json(k));
  }
  nlohmann::json out = {{"complete", report.complete}, {"kinds", kinds}, {"summary", report.summary()}};
  if (report.malformed_layer_lines > 0) {
    out["malformed_layer_lines"] = report.malformed_layer_lines;
  }
  return out;
}

} // namespace prewarm::audit
