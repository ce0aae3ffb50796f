// SPDX-License-Identifier: Apache-2.0
// The names of a slice made in staging before its payload is read (internal
// to prewarm_bundle; slice_reader.cpp runs it beside the payload's hash).
#pragma once

#include "bundle/bundle_manifest.hpp"

#include <string>
#include <vector>

namespace prewarm::bundle {

// Creates the slice's directories and empty files in staging from the
// signed manifest (names only, no payload byte), O_EXCL and never following
// a link, on a second thread while the payload is hashed: on two cores the
// filesystem's inode allocation then overlaps the hash instead of following
// it. Best effort: whatever it does not create (a name that exists, an
// unlisted parent) the extraction creates or refuses exactly as before.
// `created[i]` says whether slice.files[i] was made here.
struct PreparedEntries
{
  std::vector<char> files;              // per slice.files index: created here
  std::vector<std::string> directories; // created here, parents first
};

void prepare_entries(int staging, const Slice& slice, PreparedEntries& prepared);

// After a refusal: takes out what prepare_entries() made, so a payload
// refused before extraction leaves staging as it found it. Directories the
// extraction filled stay (the caller removes staging on any error anyway).
void unprepare_entries(int staging, const Slice& slice, const PreparedEntries& prepared);

} // namespace prewarm::bundle
