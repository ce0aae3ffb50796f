// SPDX-License-Identifier: Apache-2.0
// Test driver for the command module without the `prewarm build` CLI: runs
// one command job and leaves its capture in WORK/staging/<kind>.
//
//   command_capture WORK KINDS PRECISION [NAME=VALUE...] -- PROGRAM ARGS...
//
// KINDS is a comma list ("pocl") or "all". Prints the job's JSON report on
// stdout and its human report on stderr; exit 0 when the program succeeded.
#include "command/command_executor.hpp"
#include "command/command_job.hpp"

#include <fmt/format.h>

#include <cstring>
#include <iostream>
#include <sstream>

int
main(int argc, char** argv)
{
  using namespace prewarm;
  using namespace prewarm::command;
  if (argc < 6) {
    std::cerr << "usage: command_capture WORK KINDS PRECISION [NAME=VALUE...] -- PROGRAM ARGS...\n";
    return 2;
  }
  CommandJobRequest request;
  request.job_id = "test_only/command_capture";
  request.work_dir = argv[1];
  request.precision = argv[3];
  if (std::strcmp(argv[2], "all") != 0) {
    std::stringstream kinds(argv[2]);
    std::string name;
    while (std::getline(kinds, name, ',')) {
      auto kind = bundle::parse_cache_kind(name);
      if (!kind) {
        std::cerr << "command_capture: " << kind.error().message() << "\n";
        return 2;
      }
      request.workload.kinds.push_back(*kind);
    }
  }
  int i = 4;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const char* eq = std::strchr(argv[i], '=');
    if (eq == nullptr) {
      std::cerr << "command_capture: expected NAME=VALUE, got " << argv[i] << "\n";
      return 2;
    }
    request.workload.environment[std::string(argv[i], static_cast<std::size_t>(eq - argv[i]))] = eq + 1;
  }
  for (++i; i < argc; ++i) {
    request.workload.argv.emplace_back(argv[i]);
  }
  auto result = run_command_job(request);
  if (!result) {
    std::cerr << "command_capture: " << result.error().message() << "\n";
    return 1;
  }
  std::cerr << result->report();
  std::cout << report_json(*result) << "\n";
  return result->succeeded() ? 0 : 1;
}
