// SPDX-License-Identifier: Apache-2.0
#include "host/pci_probe.hpp"

#include "base/files.hpp"

#include <algorithm>
#include <cctype>
#include <system_error>

namespace prewarm::host {

namespace {

// A sysfs attribute: one short line, "0x8086\n".
std::string
read_attribute(const std::filesystem::path& path)
{
  auto text = read_file(path.string(), 256);
  if (!text) {
    return {};
  }
  std::string value;
  for (const char c : *text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      break;
    }
    value.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return value;
}

bool
is_hex_attribute(const std::string& value, std::size_t digits)
{
  return value.size() == digits + 2 && value.starts_with("0x") &&
         std::all_of(value.begin() + 2, value.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

} // namespace

std::vector<PciDisplayDevice>
scan_pci_display_devices(const std::filesystem::path& sys_root)
{
  std::vector<PciDisplayDevice> found;
  std::error_code ec;
  const auto bus = sys_root / "bus/pci/devices";
  std::filesystem::directory_iterator it(bus, ec);
  if (ec) {
    return found; // no sysfs (or no PCI bus): nothing to report
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) {
      break;
    }
    // Entries are symlinks into /sys/devices; attributes are read through them.
    const auto dir = it->path();
    PciDisplayDevice device;
    device.address = dir.filename().string();
    device.class_code = read_attribute(dir / "class");
    if (!is_hex_attribute(device.class_code, 6) || !device.class_code.starts_with("0x03")) {
      continue;
    }
    device.vendor_id = read_attribute(dir / "vendor");
    device.device_id = read_attribute(dir / "device");
    device.revision = read_attribute(dir / "revision");
    if (!is_hex_attribute(device.vendor_id, 4) || !is_hex_attribute(device.device_id, 4)) {
      continue;
    }
    if (!is_hex_attribute(device.revision, 2)) {
      device.revision.clear(); // unknown rather than wrong
    }
    // Intel's driver derives the IP version differently under i915 and xe.
    if (const auto bound = std::filesystem::read_symlink(dir / "driver", ec); !ec) {
      device.kernel_driver = bound.filename().string();
    }
    ec.clear();
    found.push_back(std::move(device));
  }
  std::sort(found.begin(), found.end(),
            [](const PciDisplayDevice& a, const PciDisplayDevice& b) { return a.address < b.address; });
  return found;
}

std::string
vendor_name_of(std::string_view id)
{
  if (id == "0x8086") {
    return "intel";
  }
  if (id == "0x10de") {
    return "nvidia";
  }
  if (id == "0x1002") {
    return "amd";
  }
  return {};
}

} // namespace prewarm::host
