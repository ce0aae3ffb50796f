// SPDX-License-Identifier: Apache-2.0
#include "command/miss_diagnosis.hpp"

#include "audit/cache_entries.hpp"
#include "audit/file_inventory.hpp"
#include "audit/triton_groups.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/app_hint.hpp"
#include "bundle/custom_cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <system_error>

namespace prewarm::command {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t k_largest_file_searched = 16 << 20;

std::string
joined(const std::set<std::string>& names, std::size_t at_most = 4)
{
  std::string out;
  std::size_t n = 0;
  for (const auto& name : names) {
    if (n++ == at_most) {
      out += fmt::format(", +{} more", names.size() - at_most);
      break;
    }
    out += fmt::format("{}{}", out.empty() ? "" : ", ", name);
  }
  return out;
}

// A file that holds no NUL byte in its first 8 KiB: a source, options,
// metadata; not a compiled binary.
bool
looks_like_text(std::string_view bytes)
{
  return bytes.substr(0, 8192).find('\0') == std::string_view::npos;
}

// Which of `needles` occur in a text file under `dir`, and the first such
// file (relative) for each. Files above 16 MiB are skipped.
std::map<std::string, std::string>
strings_found_in_text(const fs::path& dir, const std::vector<std::string>& needles)
{
  std::map<std::string, std::string> found;
  // Best effort: a tree that cannot be read leaves what was found so far.
  (void)for_each_entry(dir, [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (!entry.is_regular_file() || static_cast<std::uint64_t>(entry.stat.st_size) > k_largest_file_searched) {
      return WalkNext::descend;
    }
    const auto text = read_file((dir / entry.relative).string(), k_largest_file_searched);
    if (!text || !looks_like_text(*text)) {
      return WalkNext::descend;
    }
    for (const auto& needle : needles) {
      if (!needle.empty() && !found.contains(needle) && text->find(needle) != std::string::npos) {
        found.emplace(needle, std::string(entry.relative));
      }
    }
    return found.size() == needles.size() ? WalkNext::stop : WalkNext::descend;
  });
  return found;
}

std::string
clipped(std::string text, std::size_t at_most = 80)
{
  if (text.size() > at_most) {
    text.resize(at_most - 3);
    text += "...";
  }
  return in_quotes(text);
}

// Two differing values, clipped alike around where they first differ: a long
// line that differs near its end (an .llir's DIFile naming a directory) must
// not show two identical prefixes.
std::pair<std::string, std::string>
clipped_around_difference(const std::string& old_text, const std::string& new_text, std::size_t at_most = 80)
{
  const auto differ = static_cast<std::size_t>(
    std::ranges::mismatch(old_text, new_text).in1 - old_text.begin());
  constexpr std::size_t k_context = 24; // of the common part, before the difference
  const std::size_t from = differ > k_context ? differ - k_context : 0;
  const auto window = [&](const std::string& text) {
    auto part = from > 0 ? "..." + text.substr(from) : text;
    return clipped(std::move(part), at_most);
  };
  return {window(old_text), window(new_text)};
}

// What differs between two entries, and whether in their metadata (a JSON
// object: the inputs of the compile, such as Triton's num_warps) or in what
// the compile made of them (a source, an .llir, a .ptx).
struct Difference
{
  std::string text;
  bool in_metadata = false;
};

// What differs between two text files: for JSON objects the first top-level
// field (other than the entry's own hash), else the first differing line.
std::string
json_difference(const std::string& name, const nlohmann::json& old_json, const nlohmann::json& new_json)
{
  for (const auto& [field, value] : new_json.items()) {
    if (field == "hash") {
      continue;
    }
    const auto old_value = old_json.find(field);
    if (old_value == old_json.end()) {
      return fmt::format("{}: {} is new ({})", name, in_quotes(field), clipped(value.dump()));
    }
    if (*old_value != value) {
      const auto [was, is] = clipped_around_difference(old_value->dump(), value.dump());
      return fmt::format("{}: {} was {}, is {}", name, in_quotes(field), was, is);
    }
  }
  for (const auto& [field, value] : old_json.items()) {
    if (field != "hash" && !new_json.contains(field)) {
      return fmt::format("{}: {} is gone (was {})", name, in_quotes(field), clipped(value.dump()));
    }
  }
  return {};
}

Difference
text_difference(const std::string& name, const std::string& old_text, const std::string& new_text)
{
  const auto old_json = nlohmann::json::parse(old_text, nullptr, false);
  const auto new_json = nlohmann::json::parse(new_text, nullptr, false);
  if (old_json.is_object() && new_json.is_object()) {
    return {json_difference(name, old_json, new_json), true};
  }
  std::size_t line = 1;
  std::size_t a = 0;
  std::size_t b = 0;
  while (a < old_text.size() || b < new_text.size()) {
    const auto a_end = std::min(old_text.find('\n', a), old_text.size());
    const auto b_end = std::min(new_text.find('\n', b), new_text.size());
    const auto old_line = old_text.substr(std::min(a, old_text.size()), a_end - std::min(a, a_end));
    const auto new_line = new_text.substr(std::min(b, new_text.size()), b_end - std::min(b, b_end));
    if (old_line != new_line) {
      const auto [was, is] = clipped_around_difference(old_line, new_line);
      return {fmt::format("{} line {}: was {}, is {}", name, line, was, is)};
    }
    a = a_end + 1;
    b = b_end + 1;
    ++line;
  }
  return {};
}

std::optional<Difference>
first_difference(std::string_view kind, const fs::path& kind_dir, const std::string& old_entry,
                 const std::string& new_entry)
{
  const auto old_dir = kind_dir / old_entry;
  const auto new_dir = kind_dir / new_entry;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(old_dir, ec)) || !fs::is_directory(fs::symlink_status(new_dir, ec))) {
    return std::nullopt;
  }
  const auto old_files = audit::list_files(old_dir);
  const auto new_files = audit::list_files(new_dir);
  if (!old_files || !new_files) {
    return std::nullopt;
  }
  for (const auto& file : *new_files) {
    // A group file names its entry's paths: different by construction.
    // Bookkeeping (PoCL's last_accessed) says when, not what.
    if (!old_files->contains(file) || audit::is_triton_group_file(fs::path(file).filename().string()) ||
        audit::is_bookkeeping_path(kind, fmt::format("{}/{}", new_entry, file))) {
      continue;
    }
    const auto old_text = read_file((old_dir / file).string(), k_largest_file_searched);
    const auto new_text = read_file((new_dir / file).string(), k_largest_file_searched);
    if (!old_text || !new_text || *old_text == *new_text || !looks_like_text(*old_text) ||
        !looks_like_text(*new_text)) {
      continue;
    }
    if (auto difference = text_difference(file, *old_text, *new_text); !difference.text.empty()) {
      return difference;
    }
  }
  return std::nullopt;
}

// Of the captured entries of a kernel name, the difference to the one that
// compiled the same configuration (metadata alike but for the hash), where
// there is one: against another configuration of a tuned kernel the first
// difference is only which configuration it is (num_warps 8 captured, 4 now,
// while the capture held a 4 under another key).
std::optional<std::string>
nearest_difference(std::string_view kind, const fs::path& kind_dir, const std::vector<std::string>& old_entries,
                   const std::string& new_entry)
{
  std::optional<std::string> first;
  for (const auto& old_entry : old_entries) {
    auto difference = first_difference(kind, kind_dir, old_entry, new_entry);
    if (difference && !difference->in_metadata) {
      return std::move(difference->text);
    }
    if (difference && !first) {
      first = std::move(difference->text);
    }
  }
  return first;
}

// Triton derives a kernel's PTX version from the version of the ptxas that
// compiles it, and keys the kernel with that version: a .ptx whose .version
// line differs was compiled by another ptxas.
std::string
ptxas_note(const std::string& difference)
{
  if (difference.find(".ptx line ") == std::string::npos || difference.find(".version") == std::string::npos) {
    return {};
  }
  return " (another ptxas compiled it: Triton keys a kernel with its ptxas's version. PyTorch's compile workers "
         "and its compiles in the program's process use torch's bundled ptxas, torch/bin/ptxas; the program's own "
         "compiles beside workers, such as coordinate descent in mode max-autotune*, use Triton's unless "
         "TRITON_PTXAS_PATH is set. prewarm's capture of the dynamo and inductor kinds sets it to torch's; "
         "elsewhere set TRITON_PTXAS_PATH=<site-packages>/torch/bin/ptxas in the warm-up's environment)";
}

} // namespace

std::optional<std::string>
entry_difference(std::string_view kind, const fs::path& kind_dir, const std::string& old_entry,
                 const std::string& new_entry)
{
  auto difference = first_difference(kind, kind_dir, old_entry, new_entry);
  return difference ? std::optional<std::string>(std::move(difference->text)) : std::nullopt;
}

namespace {

std::string
host_name()
{
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) {
    return {};
  }
  return name.data();
}

} // namespace

// A copy: the settings are a temporary (a view into them dangled, and the
// warning printed freed bytes).
std::string
cache_variable(bundle::CacheKind kind)
{
  auto settings = bundle::cache_environment(kind, "/x", 0);
  return settings.empty() ? std::string("its variable") : std::move(settings.front().name);
}

std::string
written_into_capture_cause(const WrittenIntoCapture& written)
{
  std::set<std::string> names(written.files.begin(), written.files.end());
  return fmt::format(
    "{}: the re-run wrote {} file{} at the capture's own path, not in the copy it was given ({}): the captured "
    "files name their location by the absolute path they had at the capture (Inductor's cached output code keeps "
    "each kernel's source path, and its autotune results, .best_config, are written beside it), so an application "
    "given this cache writes at the build's path and repeats that work wherever the bundle is installed. Fix: "
    "build with --capture-root ROOT and install with --root ROOT, so that the recorded paths are the installed "
    "ones",
    written.kind, written.files.size(), written.files.size() == 1 ? "" : "s", joined(names, 3));
}

namespace {

// The known case of an application (app_hint.hpp), named only beside the
// evidence (the kind missed); the fix is the user's. By kind: why kernels
// came back under new keys (pyopencl on PoCL). By custom cache: why every
// entry of it missed (JAX's path-keyed entries).
std::string
known_case(const bundle::AppHint* hint)
{
  return hint && !hint->miss_hint.empty() ? fmt::format(" ({})", hint->miss_hint) : std::string();
}

const bundle::AppHint*
custom_cache_hint(const std::string& kind, const std::vector<CustomCacheRequest>& custom_caches)
{
  for (const auto& cache : custom_caches) {
    if (bundle::custom_cache_of(kind) == cache.name) {
      return bundle::app_hint_for_cache(cache.variable, cache.subdir.string());
    }
  }
  return nullptr;
}

} // namespace

std::vector<std::string>
diagnose_misses(const audit::UsageReport& usage, const CapturedKernels& captured_kernels,
                const std::vector<std::string>& capture_paths, const std::vector<CustomCacheRequest>& custom_caches)
{
  std::vector<std::string> causes;
  const auto host = host_name();
  std::vector<std::string> selected; // the kinds the proof ran with: a known case can depend on them
  for (const auto& k : usage.kinds) {
    selected.push_back(k.kind);
  }
  for (const auto& k : usage.kinds) {
    if (k.untouched()) {
      // Not a miss (cache_usage.hpp), but worth a note: why capture it?
      const auto kind = bundle::parse_cache_kind(k.kind);
      causes.push_back(fmt::format(
        "{}: untouched: the re-run read none of the {} captured files and wrote none: the program did not use "
        "this cache (does it pass {} through to the process that compiles? does it do the same work every run?)",
        k.kind, k.files_before, kind ? cache_variable(*kind) : std::string("its variable")));
      continue;
    }
    if (k.traced_graphs.value_or(0) > 0) {
      causes.push_back(fmt::format(
        "{}: the re-run traced {} graph{} (AOTAutograd looked up): Dynamo used no precompiled frame for {}: none "
        "was saved for that frame, PyTorch rejected the saved one (changed source, another torch) or its guards "
        "failed (the warm-up's output says which with TORCH_LOGS=recompiles; \"Failed to load entry from dynamo "
        "cache\" names a rejection)",
        k.kind, *k.traced_graphs, *k.traced_graphs == 1 ? "" : "s", *k.traced_graphs == 1 ? "it" : "them"));
    }
    if (!k.compiled_anew()) {
      continue; // a hit, or a trace alone (said above)
    }
    const auto before = causes.size();
    // Same kernel names under new keys: the key moved, not the work. The
    // evidence is what differs between the captured entry and the new one.
    std::set<std::string> again;
    std::vector<std::string> differences;
    if (const auto it = captured_kernels.find(k.kind); it != captured_kernels.end()) {
      for (const auto& entry : k.new_entries) {
        for (const auto& kernel : entry.kernels) {
          const auto old_entries = it->second.find(kernel);
          if (old_entries == it->second.end() ||
              std::ranges::find(old_entries->second, entry.entry) != old_entries->second.end()) {
            continue;
          }
          again.insert(kernel);
          if (auto difference = nearest_difference(k.kind, k.dir, old_entries->second, entry.entry); difference) {
            differences.push_back(fmt::format("kernel {}: {}{}", kernel, *difference, ptxas_note(*difference)));
          }
        }
      }
    }
    if (!again.empty()) {
      const std::string known = known_case(bundle::app_hint_for_kind(k.kind, selected));
      if (!differences.empty()) {
        causes.push_back(fmt::format("{}: the re-run compiled kernels again ({}) that the capture holds under other "
                                     "keys; what differs: {}{}",
                                     k.kind, joined(again), differences.front(), known));
      } else {
        causes.push_back(fmt::format(
          "{}: the re-run compiled kernels again ({}) that the capture holds under other keys; cause unknown: no "
          "file of the two entries that records their inputs differs{}",
          k.kind, joined(again), known));
      }
    }
    // A build-time path or the host name is evidence only where a key can
    // have read it: in a text file of the cache (a source, options, metadata),
    // not inside a compiled binary, where compilers embed temporary names.
    std::vector<std::string> needles = capture_paths;
    if (host.size() >= 3) {
      needles.push_back(host);
    }
    for (const auto& [found, file] : strings_found_in_text(k.dir, needles)) {
      if (found == host) {
        causes.push_back(fmt::format("{}: the captured text file {} holds this host's name {}: a key that includes "
                                     "the host name misses on every other host",
                                     k.kind, in_quotes(file), in_quotes(found)));
      } else {
        causes.push_back(fmt::format("{}: the captured text file {} holds the build-time path {}: a key that "
                                     "includes a path misses where the cache is installed elsewhere (make the "
                                     "program use paths that are the same at build time and at run time)",
                                     k.kind, in_quotes(file), in_quotes(found)));
      }
    }
    if (causes.size() == before) {
      // A known case is said as the likely cause, not beside "unknown".
      const auto* custom_hint = custom_cache_hint(k.kind, custom_caches);
      // A kind's known case for files rewritten in place (.best_config).
      const auto* hint = custom_hint != nullptr  ? custom_hint
                         : k.rewritten_files > 0 ? bundle::app_hint_for_kind(k.kind, selected)
                                                 : nullptr;
      const std::string example =
        k.new_file_paths.empty() ? std::string("none listed") : in_quotes(k.new_file_paths.front());
      causes.push_back(hint != nullptr && !hint->miss_hint.empty()
                         ? fmt::format("{}: {} new files (e.g. {}), no evidence in the files; likely {}", k.kind,
                                       k.new_files, example, hint->miss_hint)
                         : fmt::format("{}: cause unknown ({} new files, e.g. {})", k.kind, k.new_files, example));
    }
  }
  return causes;
}

} // namespace prewarm::command
