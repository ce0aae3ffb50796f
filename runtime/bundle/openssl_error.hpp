// SPDX-License-Identifier: Apache-2.0
// OpenSSL reports failures through a thread-local error queue; this turns the
// oldest entry into text for a message and clears the queue.
#pragma once

#include <string>

namespace prewarm::bundle {

std::string openssl_error();

} // namespace prewarm::bundle
