// SPDX-License-Identifier: Apache-2.0
// A bundle must not be written already expired, or so close to its expiry
// that the containers it is for refuse it before they start. Its expiry is
// issued-at + bundle.expires, and issued-at is SOURCE_DATE_EPOCH when set:
// a reproducible build that takes the last commit's time
// (`SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)`) on a repository idle for
// longer than bundle.expires would write a bundle that every `prewarm merge`
// and every container start refuses. `prewarm build` and `prewarm merge`
// check before they write: refused (E_EXPIRES_SOON, exit 2) unless
// --allow-expired, which writes it with a warning.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"

#include <chrono>
#include <string_view>

namespace prewarm::pack {

enum class ExpiryPolicy { refuse, warn };

// Less than this between writing a bundle and its expiry is refused.
inline constexpr std::chrono::hours k_min_validity{24};

// `what` names the bundle ("the bundle", "the merged bundle"); `now` is the
// clock when it is written. A warning under ExpiryPolicy::warn.
Status check_bundle_expiry(std::string_view what, SysSeconds issued_at, SysSeconds expires, SysSeconds now,
                           ExpiryPolicy policy);

} // namespace prewarm::pack
