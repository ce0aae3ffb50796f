// SPDX-License-Identifier: Apache-2.0
// Level Zero results as prewarm errors: PW_ZE_CHECK(zeFoo(...)) returns an
// Error naming the call and the result ("zeModuleCreate(...) failed:
// ZE_RESULT_ERROR_INVALID_NATIVE_BINARY (0x7800000f)") from the enclosing
// function.
#pragma once

#include "base/error.hpp"

#include <level_zero/ze_api.h>

#include <string>
#include <string_view>

namespace prewarm::level_zero {

// "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY"; unknown values as hex.
std::string result_name(ze_result_t result);

// Error for a failed call; `call` is the call's source text.
Error ze_error(std::string_view call, ze_result_t result);

} // namespace prewarm::level_zero

#define PW_ZE_CHECK(call_)                                                               \
  do {                                                                                   \
    if (const ze_result_t pw_ze_result_ = (call_); pw_ze_result_ != ZE_RESULT_SUCCESS) { \
      return ::std::unexpected<::prewarm::Error>(                                        \
        ::prewarm::level_zero::ze_error(#call_, pw_ze_result_));                         \
    }                                                                                    \
  } while (false)
