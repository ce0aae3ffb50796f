// SPDX-License-Identifier: Apache-2.0
// Errors as values: library code returns Result<T>; each main() has one catch.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace prewarm {

// What went wrong, coarsely; decides the process exit code (see exit_code()).
enum class Errc {
  failed,         // I/O, GPU, a job failed: exit 1
  usage,          // bad flag, bad manifest/policy/config value: exit 2
  verify,         // signature, digest, expiry, rollback, unsafe entry: exit 3
  not_applicable, // a sound bundle with nothing for this host: exit 4
  internal,       // a bug: exit 1
};

class Error
{
public:
  // `code` names the failed check for machines and tests ("E_PAYLOAD_DIGEST");
  // it may be empty for errors that need no name.
  Error(Errc category, std::string message, std::string code = {});

  // A copy whose message is "`context`: <message>".
  [[nodiscard]] Error wrap(std::string_view context) const&;
  [[nodiscard]] Error wrap(std::string_view context) &&;

  Errc category() const { return m_category; }
  const std::string& code() const { return m_code; }
  const std::string& message() const { return m_message; }
  // What a person reads: "E_CODE: message", or the message when unnamed.
  std::string describe() const;

private:
  Errc m_category;
  std::string m_message;
  std::string m_code;
};

template<typename T> using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

// Shorthand for `return fail(...)` in functions returning Result<T>.
inline std::unexpected<Error>
fail(Errc category, std::string message, std::string code = {})
{
  return std::unexpected<Error>(std::in_place, category, std::move(message), std::move(code));
}

inline std::unexpected<Error>
fail(Error error)
{
  return std::unexpected<Error>(std::move(error));
}

// 0 ok, 1 failed, 2 usage/config, 3 verification failed, 4 nothing applies.
int exit_code(Errc category);

// Human name of a category ("verification failed").
std::string_view to_string(Errc category);

} // namespace prewarm

#define PW_CONCAT_INNER(a_, b_) a_##b_
#define PW_CONCAT(a_, b_) PW_CONCAT_INNER(a_, b_)

// Return the error of `expr_` (a Status or Result) from the enclosing function.
#define PW_TRY(expr_)                                                                    \
  do {                                                                                   \
    if (auto pw_try_ = (expr_); !pw_try_) {                                              \
      return ::std::unexpected<::prewarm::Error>(std::move(pw_try_).error());            \
    }                                                                                    \
  } while (false)

// As PW_TRY, adding `ctx_` (anything convertible to string_view) to the message.
#define PW_TRY_CTX(ctx_, expr_)                                                          \
  do {                                                                                   \
    if (auto pw_try_ = (expr_); !pw_try_) {                                              \
      return ::std::unexpected<::prewarm::Error>(std::move(pw_try_).error().wrap(ctx_)); \
    }                                                                                    \
  } while (false)

// `PW_ASSIGN(auto x, f());` declares/assigns `x` from the value of a Result,
// or returns its error from the enclosing function.
#define PW_ASSIGN(lhs_, expr_) PW_ASSIGN_IMPL(PW_CONCAT(pw_assign_, __LINE__), lhs_, expr_, {})
#define PW_ASSIGN_CTX(lhs_, ctx_, expr_)                                                 \
  PW_ASSIGN_IMPL(PW_CONCAT(pw_assign_, __LINE__), lhs_, expr_, ctx_)
#define PW_ASSIGN_IMPL(tmp_, lhs_, expr_, ctx_)                                          \
  auto tmp_ = (expr_);                                                                   \
  if (!tmp_) {                                                                           \
    return ::std::unexpected<::prewarm::Error>(                                          \
      ::prewarm::detail::maybe_wrap(std::move(tmp_).error(), ctx_));                     \
  }                                                                                      \
  lhs_ = std::move(*tmp_)

namespace prewarm::detail {
inline Error
maybe_wrap(Error error, std::string_view context)
{
  return context.empty() ? std::move(error) : std::move(error).wrap(context);
}
} // namespace prewarm::detail
