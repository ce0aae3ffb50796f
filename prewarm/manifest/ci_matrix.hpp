// SPDX-License-Identifier: Apache-2.0
// The CI job matrix of a sharded build: `prewarm plan MANIFEST --shards N
// --format json|github-matrix|gitlab`. One entry per shard I/N (the same
// partition `prewarm build --shard I/N` builds, plan.hpp), each with the kind
// of runner its jobs need:
//   "cpu"        every job runs on the OpenCL CPU device (PoCL) or compiles
//                ahead of time with ocloc: any runner with the builder image
//   <target>     a job needs that GPU (NVIDIA caches are only made on the
//                device; Intel targets the installed ocloc does not know):
//                a runner that has it (e.g. label "h100")
// The partition (shard_partition.hpp) keeps each of N >= 2 shards on one
// runner kind; a single shard whose jobs need two different GPUs is a usage
// error naming the GPUs.
//
// Formats:
//   json           {"shards":N,"total_jobs":T,"include":[{"shard":"1/N","index":1,
//                   "count":N,"runner":"cpu","targets":[...],"jobs":[...]}]}
//   github-matrix  one line for `strategy.matrix: ${{ fromJSON(...) }}`:
//                  {"include":[{"shard":"1/N","runner":"cpu","name":"..."}]}
//   gitlab         a child-pipeline YAML: one job per shard (tags: [runner])
//                  that runs `prewarm build --shard`, and a merge job that
//                  needs them all
#pragma once

#include "base/error.hpp"
#include "manifest/plan.hpp"
#include "manifest/shard_partition.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest {

struct CiShard
{
  Shard shard;
  std::string runner;               // "cpu" or a target name
  std::vector<std::string> targets; // sorted, unique
  std::vector<std::string> job_ids; // sorted
};

struct CiMatrix
{
  std::size_t total_jobs = 0;
  std::vector<CiShard> shards; // 1/N .. N/N
};

// `shard_plans[i]` is make_plan(..., Shard{i + 1, N}) for i in [0, N).
// Errors (Errc::usage): N < 1, N > total jobs (a shard would be empty),
// plans that are not the N shards of one plan, a shard needing two GPUs.
Result<CiMatrix> make_ci_matrix(std::span<const Plan> shard_plans);

enum class CiFormat { json, github_matrix, gitlab };
Result<CiFormat> parse_ci_format(std::string_view text); // "json" | "github-matrix" | "gitlab"

struct CiPipelineOptions
{
  std::string manifest_path; // as the CI jobs should pass it to `prewarm build`; empty: default
};

// The text to print on stdout (ends with a newline).
std::string format_ci_matrix(const CiMatrix& matrix, CiFormat format, const CiPipelineOptions& options = {});

} // namespace prewarm::manifest
