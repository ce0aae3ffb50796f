// SPDX-License-Identifier: Apache-2.0
// How `prewarm build --shard I/N` splits a plan's jobs between CI runners.
//
// Every job needs a kind of runner (runner_kind): "cpu" when any runner with
// the builder image can do it (the OpenCL CPU device, or ahead-of-time
// compilation with ocloc), or a GPU target's name when only a runner with
// that GPU can (NVIDIA caches are made on the device; a command workload runs
// on the device; an Intel device the builder's ocloc does not know). A shard
// must run on ONE runner, so the partition groups jobs by runner kind before
// it spreads them:
//   1. each GPU kind gets its own shards, and so does "cpu" when N leaves
//      room for it (otherwise the cpu jobs are spread over every shard: any
//      runner can do them); N below the number of GPU kinds is an error;
//   2. the remaining shards go, one at a time, to the group with the most
//      jobs per shard (ties: group order), never more shards than jobs;
//   3. within a group, its jobs (in id order) are dealt round-robin.
// Group order: "cpu" first, then GPU kinds by name; shards are numbered in
// that order. The result depends only on the manifest, the target registry
// and the builder image's ocloc (never on the devices of the host that
// computes it), so every runner computes the same partition.
#pragma once

#include "base/error.hpp"
#include "manifest/manifest.hpp"
#include "manifest/plan.hpp"
#include "manifest/target_registry.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest {

inline constexpr std::string_view k_cpu_runner = "cpu";

std::string runner_kind(const Target& target, const ModelSpec& model, const OclocInfo& ocloc);
// The same over the host's toolchains: a CPU runner when any of them knows
// the device (a runner made with ./setup.sh intel-root has the 26.27 one).
std::string runner_kind(const Target& target, const ModelSpec& model, std::span<const OclocInfo> oclocs);

// The 0-based shard of each job; `runners[i]` is the runner kind of the i-th
// job in id order. Errc::usage when shard_count is below the number of GPU
// kinds. Shards beyond the number of jobs stay empty (the caller reports it).
Result<std::vector<int>> partition_jobs(std::span<const std::string> runners, int shard_count);

} // namespace prewarm::manifest
