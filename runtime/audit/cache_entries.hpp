// SPDX-License-Identifier: Apache-2.0
// What a file of a cache directory belongs to, in the names the format
// gives (docs/research/kernel-caches.md §5-8):
//   triton    <hash>/<name>.json holds "name": the kernel (its group file
//             __grp__<name>.json is skipped)
//   inductor  fxgraph/<k[1:3]>/<key>/...: the FX graph key;
//             aotautograd/<..>/<key>/...: the AOTAutograd key;
//             triton/<device>/<hash>/...: Triton kernels, named as above
//   pocl      <2 chars>/<38 chars>/...: the program hash; directories beside
//             program.bc are the kernels compiled for it
//   cuda      ComputeCache entries (opaque): counted, "index" is bookkeeping
//   programs  <2 hex>/<key>.bin|.meta: the prewarm program-store key
// Any other kind (an extra cache a manifest declares) is grouped by its
// first path component.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace prewarm::audit {

// The entry a file belongs to: a key unique within its kind.
std::string entry_of(std::string_view kind, std::string_view relative_path);

// Files a driver rewrites on every use (CUDA's index, PoCL's temporaries,
// lock files, Triton staging directories): neither reuse nor a miss.
bool is_bookkeeping_path(std::string_view kind, std::string_view relative_path);

// The kernel names an entry holds where the format records them (pocl:
// the kernel directories of a program; triton and inductor/triton: the
// metadata "name"); empty for other kinds.
std::set<std::string> entry_kernel_names(std::string_view kind, const std::filesystem::path& kind_dir,
                                         std::string_view entry);

// A readable name for an entry, from the files under `kind_dir` where the
// format has one ("kernel triton_poi_fused_add_0", "program ab/cd12... kernels
// sgemm, axpy", "graph fxgraph key"); the entry key itself otherwise.
std::string entry_label(std::string_view kind, const std::filesystem::path& kind_dir, std::string_view entry);

} // namespace prewarm::audit
