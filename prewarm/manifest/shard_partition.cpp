// SPDX-License-Identifier: Apache-2.0
#include "manifest/shard_partition.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

namespace prewarm::manifest {
namespace {

struct RunnerGroup
{
  std::vector<std::size_t> positions; // job positions, in id order
  int shards = 1;
};

// Hands out the shards left after every group got one: the group with the
// most jobs per shard gains one, until none is left or every group has a
// shard per job.
void
share_remaining(std::vector<RunnerGroup*>& groups, int remaining)
{
  while (remaining > 0) {
    RunnerGroup* busiest = nullptr;
    for (RunnerGroup* group : groups) {
      if (static_cast<std::size_t>(group->shards) >= group->positions.size()) {
        continue;
      }
      // jobs/shards compared without division: a.jobs * b.shards > b.jobs * a.shards
      if (busiest == nullptr || group->positions.size() * static_cast<std::size_t>(busiest->shards) >
                                  busiest->positions.size() * static_cast<std::size_t>(group->shards)) {
        busiest = group;
      }
    }
    if (busiest == nullptr) {
      return;
    }
    ++busiest->shards;
    --remaining;
  }
}

} // namespace

std::string
runner_kind(const Target& target, const ModelSpec& model, const OclocInfo& ocloc)
{
  switch (target.vendor) {
  case Vendor::cpu:
    return std::string(k_cpu_runner);
  case Vendor::nvidia:
    return target.name;
  case Vendor::intel:
    // Built-in models compile ahead of time wherever ocloc knows the device;
    // a command workload, or a device ocloc does not know, needs the GPU.
    return model.is_builtin() && ocloc.knows(target.ocloc_device) ? std::string(k_cpu_runner) : target.name;
  }
  return target.name;
}

std::string
runner_kind(const Target& target, const ModelSpec& model, std::span<const OclocInfo> oclocs)
{
  for (const auto& ocloc : oclocs) {
    if (ocloc.knows(target.ocloc_device)) {
      return runner_kind(target, model, ocloc);
    }
  }
  return runner_kind(target, model, OclocInfo{});
}

Result<std::vector<int>>
partition_jobs(std::span<const std::string> runners, int shard_count)
{
  std::vector<int> owner(runners.size(), 0);
  if (shard_count <= 1) {
    return owner;
  }
  std::map<std::string, RunnerGroup, std::less<>> gpu_groups; // by name
  RunnerGroup cpu;
  for (std::size_t i = 0; i < runners.size(); ++i) {
    (runners[i] == k_cpu_runner ? cpu : gpu_groups[runners[i]]).positions.push_back(i);
  }
  const auto gpu_kinds = static_cast<int>(gpu_groups.size());
  if (shard_count < gpu_kinds) {
    std::vector<std::string> names;
    for (const auto& [name, group] : gpu_groups) {
      names.push_back(name);
    }
    return fail(Errc::usage,
                fmt::format("--shards {}: the jobs need {} different GPU runners ({}), and a shard runs on one "
                            "runner: use at least {} shards",
                            shard_count, gpu_kinds, fmt::join(names, ", "), gpu_kinds),
                "E_USAGE");
  }
  const bool cpu_has_own_shards = !cpu.positions.empty() && shard_count > gpu_kinds;
  std::vector<RunnerGroup*> groups;
  if (cpu_has_own_shards) {
    groups.push_back(&cpu);
  }
  for (auto& [name, group] : gpu_groups) {
    groups.push_back(&group);
  }
  share_remaining(groups, shard_count - static_cast<int>(groups.size()));

  int first = 0;
  for (const RunnerGroup* group : groups) {
    for (std::size_t k = 0; k < group->positions.size(); ++k) {
      owner[group->positions[k]] = first + static_cast<int>(k % static_cast<std::size_t>(group->shards));
    }
    first += group->shards;
  }
  if (!cpu_has_own_shards) {
    for (std::size_t k = 0; k < cpu.positions.size(); ++k) {
      owner[cpu.positions[k]] = static_cast<int>(k % static_cast<std::size_t>(shard_count));
    }
  }
  return owner;
}

} // namespace prewarm::manifest
