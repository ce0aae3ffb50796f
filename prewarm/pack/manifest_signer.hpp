// SPDX-License-Identifier: Apache-2.0
// Signs manifest bytes into a signature envelope (bundle/signature.hpp).
#pragma once

#include "base/error.hpp"
#include "pack/key_pair.hpp"

#include <span>
#include <string>
#include <string_view>

namespace prewarm::pack {

// Envelope text with one "sig" line per key, each over
// PAE(k_manifest_payload_type, manifest_bytes). At least one key; a key given
// twice is an error (it would not count twice anyway).
Result<std::string> sign_manifest(std::string_view manifest_bytes,
                                  std::span<const PrivateKey> keys);

} // namespace prewarm::pack
