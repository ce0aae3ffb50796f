// SPDX-License-Identifier: Apache-2.0
#include "engine/defines.hpp"

namespace prewarm::engine {

Defines&
Defines::set(std::string_view name, std::string_view value)
{
  m_values.insert_or_assign(std::string(name), std::string(value));
  return *this;
}

Defines&
Defines::set(std::string_view name, std::int64_t value)
{
  return set(name, std::string_view(std::to_string(value)));
}

Defines&
Defines::flag(std::string_view name)
{
  return set(name, std::string_view{});
}

std::string
Defines::options() const
{
  std::string text;
  for (const auto& [name, value] : m_values) {
    if (!text.empty()) {
      text += ' ';
    }
    text += "-D";
    text += name;
    if (!value.empty()) {
      text += '=';
      text += value;
    }
  }
  return text;
}

} // namespace prewarm::engine
