// SPDX-License-Identifier: Apache-2.0
#include "aot/spirv_compiler.hpp"

#include "aot/ocloc.hpp"

#include <fmt/format.h>

#include <memory>

namespace prewarm::aot {

engine::SpirvCompiler
ocloc_spirv_compiler()
{
  return [ocloc = std::shared_ptr<Ocloc>()](const engine::ProgramText& program,
                                             const engine::SessionDevice& device) mutable -> Result<std::string> {
    if (!ocloc) {
      PW_ASSIGN_CTX(auto located, "SPIR-V for Level Zero", Ocloc::locate());
      ocloc = std::make_shared<Ocloc>(std::move(located));
    }
    const auto pci_id = device.properties.find(prop::pci_id);
    if (pci_id == device.properties.end()) {
      return fail(Errc::failed, fmt::format("{}: the device reports no PCI id to compile SPIR-V for", device.description));
    }
    OclocCompileRequest request;
    request.source_name = std::string(program.source_name);
    request.source = program.source;
    request.options = program.options;
    request.device = pci_id->second;
    return ocloc->compile_spirv(request);
  };
}

} // namespace prewarm::aot
