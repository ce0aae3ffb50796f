// SPDX-License-Identifier: Apache-2.0
#include "layer/program_serving.hpp"

#include "layer/aot_binaries.hpp"
#include "layer/layer_log.hpp"
#include "layer/layer_settings.hpp"
#include "layer/next_dispatch.hpp"
#include "layer/program_queries.hpp"
#include "layer/program_table.hpp"

#include <fmt/format.h>

namespace prewarm::layer {

StoredBinaries
read_records(const std::vector<store::ProgramKey>& keys)
{
  StoredBinaries out;
  for (const auto& key : keys) {
    auto binary = store::read_record(settings().store, key);
    if (!binary) {
      out.reason = binary.error().code() == "E_STORE_ABSENT"
                     ? std::string("not in the store")
                     : fmt::format("stored record {} rejected: {}", short_key(key.digest()), binary.error().message());
      out.binaries.clear();
      return out;
    }
    out.binaries.push_back(std::move(*binary));
  }
  return out;
}

AotServing
aot_binaries(const std::vector<cl_device_id>& devices, std::string_view source, std::string_view options)
{
  AotServing out;
  for (const auto device : devices) {
    auto found = find_aot_binary(device, source, options);
    if (found.zebin.empty()) {
      out.reason = found.reason;
      out.installed = found.installed;
      out.binaries.clear();
      return out;
    }
    if (out.origin.empty()) {
      out.origin = fmt::format("AOT {} {}", found.target, short_key(found.key));
    }
    out.binaries.push_back(std::move(found.zebin));
  }
  return out;
}

cl_int
materialise(cl_program program)
{
  auto tracked = ProgramTable::instance().find(program);
  if (!tracked || !tracked->virtual_compile) {
    return CL_SUCCESS;
  }
  const auto& compile = *tracked->virtual_compile;
  std::vector<cl_program> headers;
  std::vector<const char*> names;
  for (const auto& header : compile.headers) {
    headers.push_back(header.program);
    names.push_back(header.name.c_str());
  }
  const auto status = next().clCompileProgram(program, static_cast<cl_uint>(compile.devices.size()), compile.devices.data(),
                                              compile.options.c_str(), static_cast<cl_uint>(headers.size()),
                                              headers.empty() ? nullptr : headers.data(), names.empty() ? nullptr : names.data(),
                                              nullptr, nullptr);
  operator_line(fmt::format("compiled a deferred compile for real ({}): status {}", short_key(tracked->keys.front().digest()), status));
  ProgramTable::instance().update(program, [](TrackedProgram& t) { t.virtual_compile.reset(); });
  for (const auto header : headers) {
    next().clReleaseProgram(header);
  }
  return status;
}

} // namespace prewarm::layer
