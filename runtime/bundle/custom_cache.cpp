// SPDX-License-Identifier: Apache-2.0
#include "bundle/custom_cache.hpp"

#include "base/encoding.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/runtime_variable.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::bundle {

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
