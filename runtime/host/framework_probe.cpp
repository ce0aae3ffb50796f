// SPDX-License-Identifier: Apache-2.0
#include "host/framework_probe.hpp"

#include "base/device_properties.hpp"
#include "base/encoding.hpp"
#include "host/subprocess.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace prewarm::host {

std::string_view
framework_version_script()
{
  return "import importlib.metadata as metadata\n"
         "for dist, key in (('torch', 'torch'), ('triton', 'triton'),\n"
         "                  ('intel-extension-for-pytorch', 'ipex')):\n"
         "    try:\n"
         "        print('framework.%s %s' % (key, metadata.version(dist).strip()))\n"
         "    except Exception:\n"
         "        pass\n"
         // Dynamo's precompiled entries hold bytecode of one Python version.
         "import platform\n"
         "print('framework.python %s' % platform.python_version())\n";
}

FrameworkVersions
parse_framework_versions(std::string_view output)
{
  FrameworkVersions versions;
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line)) {
    line = std::string(trim(line));
    const auto space = line.find(' ');
    if (!line.starts_with(prop::framework_prefix) || space == std::string::npos) {
      continue;
    }
    auto key = line.substr(0, space);
    auto value = std::string(trim(std::string_view(line).substr(space + 1)));
    const bool printable = std::all_of(value.begin(), value.end(), [](char c) { return c > ' ' && c < 0x7f; });
    const bool key_ok = std::all_of(key.begin(), key.end(), [](char c) {
      return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0 ||
             c == '.' || c == '-';
    });
    if (!value.empty() && value.size() <= 128 && printable && key_ok) {
      versions[std::move(key)] = std::move(value);
    }
  }
  return versions;
}

std::string
framework_python_from_environment()
{
  const char* value = std::getenv(std::string(k_python_variable).c_str());
  if (value == nullptr || *value == '\0') {
    return "python3";
  }
  return std::string_view(value) == "none" ? std::string() : std::string(value);
}

Result<FrameworkVersions>
probe_framework_versions(const std::string& python, std::chrono::milliseconds timeout)
{
  PW_ASSIGN(const auto output, run_command({python, "-c", std::string(framework_version_script())}, timeout));
  return parse_framework_versions(output);
}

} // namespace prewarm::host
