// SPDX-License-Identifier: Apache-2.0
// Times ahead-of-time compilation of the default manifest's kernel programs
// for N Intel targets (registry names) at a given --jobs, and reports bytes
// per target. One run per process: the driver script (run_bench.sh) repeats
// it and computes medians and the --jobs 2 / --jobs 1 ratio.
//
//   prewarm_bench_aot --jobs 2 --out DIR iris-xe dg1 arc-a770 arc-a380 max-1550
// prints one JSON object on stdout.
#include "aot/aot_compiler.hpp"
#include "aot/kernel_variants.hpp"
#include "base/files.hpp"
#include "manifest/manifest.hpp"
#include "manifest/presets.hpp"
#include "manifest/target_registry.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files();
}

namespace {

double
children_cpu_seconds()
{
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

prewarm::Status
run(int argc, char** argv)
{
  using namespace prewarm;
  unsigned jobs = 1;
  std::string out;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--jobs" && i + 1 < argc) {
      jobs = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (arg == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      names.push_back(arg);
    }
  }
  if (out.empty() || names.empty()) {
    return fail(Errc::usage, "usage: prewarm_bench_aot [--jobs N] --out DIR TARGET...");
  }
  PW_ASSIGN(auto registry, manifest::TargetRegistry::embedded());
  PW_ASSIGN(auto presets, manifest::PresetLibrary::embedded());
  PW_ASSIGN(auto manifest, manifest::load_default_manifest({registry, presets}));
  std::vector<aot::KernelVariant> variants;
  for (const auto& model : manifest.models) {
    if (!model.is_builtin()) {
      continue;
    }
    for (auto precision : manifest.precisions) {
      PW_ASSIGN(auto v, aot::workload_variants(*model.architecture, precision, manifest.shapes, manifest.coverage));
      variants.insert(variants.end(), v.begin(), v.end());
    }
  }
  std::ranges::sort(variants);
  variants.erase(std::unique(variants.begin(), variants.end()), variants.end());
  std::vector<aot::AotTargetSpec> specs;
  for (const auto& name : names) {
    const auto* t = registry.find(name);
    if (t == nullptr || t->vendor != manifest::Vendor::intel) {
      return fail(Errc::usage, fmt::format("{} is not an Intel target of the registry", name));
    }
    specs.push_back({t->name, t->ocloc_device, t->ip_version, t->pci_ids});
  }
  PW_ASSIGN(auto ocloc, aot::Ocloc::locate());
  aot::AotCompileOptions options;
  options.jobs = jobs;
  options.validation = aot::Validation::skip; // timed: compile only (validation is tested separately)
  const double cpu_before = children_cpu_seconds();
  PW_ASSIGN(auto report, aot::compile_targets(ocloc, specs, variants, kernels::embedded_files(), out, options));
  const double cpu = children_cpu_seconds() - cpu_before;
  nlohmann::json json = {{"jobs", jobs},
                         {"targets", names.size()},
                         {"programs_per_target", variants.size()},
                         {"compiles", report.compiles},
                         {"seconds", report.seconds},
                         {"ocloc_cpu_seconds", cpu},
                         {"ocloc", ocloc.driver_version()}};
  for (const auto& t : report.targets) {
    json["per_target"].push_back({{"target", t.name},
                                  {"ocloc_device", t.ocloc_device},
                                  {"zebin_bytes", t.zebin_bytes},
                                  {"spirv_bytes", t.spirv_bytes}});
  }
  std::puts(json.dump().c_str());
  return {};
}

} // namespace

int
main(int argc, char** argv)
{
  auto status = run(argc, argv);
  if (!status) {
    std::fprintf(stderr, "prewarm_bench_aot: error: %s\n", status.error().message().c_str());
    return prewarm::exit_code(status.error().category());
  }
  return 0;
}
