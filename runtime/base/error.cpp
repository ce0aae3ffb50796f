// SPDX-License-Identifier: Apache-2.0
#include "base/error.hpp"

#include <fmt/format.h>

namespace prewarm {

Error::Error(Errc category, std::string message, std::string code)
  : m_category(category), m_message(std::move(message)), m_code(std::move(code))
{
}

std::string
Error::describe() const
{
  return m_code.empty() ? m_message : m_code + ": " + m_message;
}

Error
Error::wrap(std::string_view context) const&
{
  return Error(m_category, fmt::format("{}: {}", context, m_message), m_code);
}

Error
Error::wrap(std::string_view context) &&
{
  m_message = fmt::format("{}: {}", context, m_message);
  return std::move(*this);
}

int
exit_code(Errc category)
{
  switch (category) {
  case Errc::usage:
    return 2;
  case Errc::verify:
    return 3;
  case Errc::not_applicable:
    return 4;
  case Errc::failed:
  case Errc::internal:
    return 1;
  }
  return 1;
}

std::string_view
to_string(Errc category)
{
  switch (category) {
  case Errc::failed:
    return "failed";
  case Errc::usage:
    return "usage error";
  case Errc::verify:
    return "verification failed";
  case Errc::not_applicable:
    return "nothing applies to this host";
  case Errc::internal:
    return "internal error";
  }
  return "failed";
}

} // namespace prewarm
