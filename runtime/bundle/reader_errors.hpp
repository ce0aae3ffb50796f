// SPDX-License-Identifier: Apache-2.0
// The bundle reader's two kinds of error (slice_reader.hpp): a refusal of
// what a payload holds (Errc::verify with its code: E_PAYLOAD_FORMAT,
// E_TYPE, ...) and an I/O fault on the staging side (Errc::failed, E_IO).
// Shared by payload verification, the tar audit and the extraction.
#pragma once

#include "base/error.hpp"

#include <string>
#include <string_view>

namespace prewarm::bundle {

inline std::unexpected<Error>
verify_error(std::string_view code, std::string message)
{
  return fail(Errc::verify, std::move(message), std::string(code));
}

inline std::unexpected<Error>
io_error(std::string message)
{
  return fail(Errc::failed, std::move(message), "E_IO");
}

} // namespace prewarm::bundle
