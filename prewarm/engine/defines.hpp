// SPDX-License-Identifier: Apache-2.0
// Preprocessor definitions for a kernel build (-DNAME=VALUE), kept sorted by
// name so that one specialisation always renders to the same option string:
// the program store keys on that string, and the session caches programs by it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace prewarm::engine {

class Defines
{
public:
  Defines() = default;

  Defines& set(std::string_view name, std::string_view value);
  Defines& set(std::string_view name, std::int64_t value);
  Defines& set(std::string_view name, int value) { return set(name, std::int64_t{value}); }
  Defines& flag(std::string_view name); // -DNAME

  // "-DA=1 -DB -DTILE=16": sorted by name, single spaces, no trailing space.
  std::string options() const;
  bool empty() const { return m_values.empty(); }
  const std::map<std::string, std::string, std::less<>>& values() const { return m_values; }

private:
  std::map<std::string, std::string, std::less<>> m_values; // empty value = flag
};

} // namespace prewarm::engine
