// SPDX-License-Identifier: Apache-2.0
#include "bundle/custom_cache.hpp"

#include "base/encoding.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/runtime_variable.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::bundle {

namespace {

bool
is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\n';
}

std::string_view
trimmed(std::string_view text)
{
  while (!text.empty() && is_blank(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_blank(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

// "--cache_dir", "base_compiledir", "gcc__cxxflags": one or two '-', then
// [A-Za-z0-9_.-] starting with a letter, digit or '_'.
bool
is_flag_key(std::string_view key)
{
  for (int dashes = 0; dashes < 2 && key.starts_with('-'); ++dashes) {
    key.remove_prefix(1);
  }
  const auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  return !key.empty() && key.size() <= 128 && word(key.front()) &&
         std::all_of(key.begin(), key.end(), [&](char c) { return word(c) || c == '.' || c == '-'; });
}

// The flags of a value, as the application splits it (blank ones left out).
std::vector<std::string_view>
flag_items(std::string_view value, FlagSeparator separator)
{
  std::vector<std::string_view> items;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= value.size(); ++i) {
    const bool end = i == value.size() || (separator == FlagSeparator::comma ? value[i] == ',' : is_blank(value[i]));
    if (end) {
      if (const auto item = value.substr(start, i - start); !trimmed(item).empty()) {
        items.push_back(item);
      }
      start = i + 1;
    }
  }
  return items;
}

bool
sets_key(std::string_view item, std::string_view key)
{
  item = trimmed(item);
  return item.starts_with(key) && (item.size() == key.size() || item[key.size()] == '=');
}

std::unexpected<Error>
template_error(std::string_view text, std::string_view what)
{
  return std::unexpected<Error>(
    Error(Errc::verify, fmt::format("flag {}: {}", in_quotes(text), what), "E_MANIFEST_FORMAT"));
}

} // namespace

std::string_view
separator_word(FlagSeparator separator)
{
  return separator == FlagSeparator::comma ? "comma" : "space";
}

std::optional<FlagSeparator>
parse_separator_word(std::string_view word)
{
  if (word == "comma") {
    return FlagSeparator::comma;
  }
  if (word == "space") {
    return FlagSeparator::space;
  }
  return std::nullopt;
}

std::optional<FlagSeparator>
parse_separator_char(std::string_view text)
{
  if (text == ",") {
    return FlagSeparator::comma;
  }
  if (text == " ") {
    return FlagSeparator::space;
  }
  return std::nullopt;
}

Result<CacheFlag>
parse_flag_template(std::string_view text, FlagSeparator separator)
{
  if (text.empty()) {
    return template_error(text, "empty: write KEY={dir} (base_compiledir={dir}, --cache_dir={dir})");
  }
  if (const auto dollar = text.find('$'); dollar != std::string_view::npos) {
    return template_error(text, fmt::format("{} is not expanded: the flag is literal text with one placeholder, "
                                            "{{dir}}, where the cache directory goes",
                                            in_quotes(text.substr(dollar))));
  }
  std::size_t placeholders = 0;
  for (auto open = text.find('{'); open != std::string_view::npos; open = text.find('{', open + 1)) {
    const auto close = text.find('}', open);
    const auto name = text.substr(open, close == std::string_view::npos ? std::string_view::npos : close - open + 1);
    if (name != k_flag_placeholder) {
      return template_error(text,
                            fmt::format("unknown placeholder {}: the one placeholder is {{dir}}", in_quotes(name)));
    }
    ++placeholders;
  }
  if (placeholders == 0) {
    return template_error(text, "no placeholder: write {dir} where the cache directory goes (base_compiledir={dir})");
  }
  if (placeholders > 1) {
    return template_error(text,
                          fmt::format("{{dir}} appears {} times: the cache directory goes in once", placeholders));
  }
  if (text.find('}') < text.find(k_flag_placeholder)) {
    return template_error(text, "a '}' outside the placeholder {dir}");
  }
  if (!text.ends_with(k_flag_placeholder)) {
    return template_error(text, "text after {dir}: the flag's value is the cache directory itself (KEY={dir})");
  }
  auto key = text.substr(0, text.size() - k_flag_placeholder.size());
  if (!key.ends_with('=') || !is_flag_key(key.substr(0, key.size() - 1))) {
    return template_error(text, "expected KEY={dir}, KEY one or two '-' then letters, digits, '_', '.' and '-' "
                                "(base_compiledir={dir}, --cache_dir={dir})");
  }
  key.remove_suffix(1);
  return CacheFlag{std::string(key), separator};
}

std::string
flag_template(const CacheFlag& flag)
{
  return fmt::format("{}={}", flag.key, k_flag_placeholder);
}

std::vector<std::string>
conflicting_flags(std::string_view value, const CacheFlag& flag)
{
  std::vector<std::string> found;
  for (const auto item : flag_items(value, flag.separator)) {
    if (sets_key(item, flag.key)) {
      found.emplace_back(trimmed(item));
    }
  }
  return found;
}

Result<MergedFlags>
merge_cache_flag(std::string_view existing, const CacheFlag& flag, std::string_view dir)
{
  if (const auto bad = dir.find_first_of(", \t\n'\"\\"); bad != std::string_view::npos) {
    return fail(Errc::failed, fmt::format("the directory {} holds {}, which the application would read as the end "
                                          "of the flag {}",
                                          in_quotes(dir), in_quotes(dir.substr(bad, 1)), flag_template(flag)));
  }
  MergedFlags merged;
  const std::string_view separator = flag.separator == FlagSeparator::comma ? "," : " ";
  for (const auto item : flag_items(existing, flag.separator)) {
    if (sets_key(item, flag.key)) {
      merged.replaced.emplace_back(trimmed(item));
      continue;
    }
    merged.value.append(item);
    merged.value.append(separator);
  }
  merged.value += fmt::format("{}={}", flag.key, dir);
  return merged;
}

Status
check_custom_cache_name(std::string_view name)
{
  const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  const bool well_formed =
    !name.empty() && name.size() <= 64 && lower_alnum(name.front()) &&
    std::all_of(name.begin(), name.end(), [&](char c) { return lower_alnum(c) || c == '.' || c == '_' || c == '-'; });
  if (!well_formed) {
    return fail(Errc::verify,
                fmt::format("custom cache name {} is not of the form [a-z0-9][a-z0-9._-]{{0,63}}", in_quotes(name)),
                "E_MANIFEST_FORMAT");
  }
  if (name == k_custom_kind || parse_cache_kind(name)) {
    return fail(Errc::verify,
                fmt::format("custom cache name {} collides with a built-in cache kind (choose another name; the "
                            "built-in kind {} is selected with `kinds:`)",
                            in_quotes(name), in_quotes(name)),
                "E_CUSTOM_CACHE_NAME");
  }
  return {};
}

Status
check_custom_cache(const CustomCache& cache)
{
  PW_TRY(check_custom_cache_name(cache.name));
  PW_TRY_CTX(fmt::format("custom cache {}", in_quotes(cache.name)), check_exported_variable(cache.variable));
  if (cache.flag) {
    PW_TRY_CTX(fmt::format("custom cache {}", in_quotes(cache.name)),
               parse_flag_template(flag_template(*cache.flag), cache.flag->separator));
  }
  return {};
}

std::string_view
custom_cache_of(std::string_view entry_path)
{
  if (!entry_path.starts_with(k_custom_kind) || entry_path.size() <= k_custom_kind.size() + 1 ||
      entry_path[k_custom_kind.size()] != '/') {
    return {};
  }
  const auto rest = entry_path.substr(k_custom_kind.size() + 1);
  return rest.substr(0, rest.find('/'));
}

} // namespace prewarm::bundle
