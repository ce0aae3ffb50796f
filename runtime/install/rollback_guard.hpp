// SPDX-License-Identifier: Apache-2.0
// No channel goes back: an older bundle of a channel, validly signed and not
// yet expired, could otherwise be installed over its successor and undo what
// that fixed. Against the root's channel state (install_records.hpp: for
// every channel installed there, its highest serial and that manifest), a
// lower serial is E_ROLLBACK, the same serial with another manifest
// E_ROLLBACK_EQUIVOCATION.
#pragma once

#include "base/error.hpp"
#include "install/bundle_verification.hpp"
#include "install/install_records.hpp"

namespace prewarm::install {

// Errc::verify E_ROLLBACK or E_ROLLBACK_EQUIVOCATION; a channel not in
// `state` passes.
Status check_rollback(const ChannelState& state, const VerifiedBundle& verified);

} // namespace prewarm::install
