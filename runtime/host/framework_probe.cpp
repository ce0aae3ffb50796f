// SPDX-License-Identifier: Apache-2.0
#include "host/framework_probe.hpp"

#include "base/device_properties.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "host/subprocess.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <sstream>

namespace prewarm::host {

namespace {

// Distribution (as pip names it) -> the framework.<key> its version is
// reported as. torch, Triton and IPEX for the kinds that require them; the
// frameworks whose CPU caches prewarm knows (bundle/app_hint.hpp: JAX,
// PyTensor, OpenVINO, onnxruntime-openvino), so a CPU slice can require the
// version that wrote its entries as the framework sees it.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> k_frameworks{{
  {"torch", "torch"},
  {"triton", "triton"},
  {"intel-extension-for-pytorch", "ipex"},
  {"jax", "jax"},
  {"jaxlib", "jaxlib"},
  {"pytensor", "pytensor"},
  {"openvino", "openvino"},
  {"onnxruntime-openvino", "onnxruntime-openvino"},
}};

std::string
make_version_script()
{
  std::string pairs;
  for (const auto& [dist, key] : k_frameworks) {
    pairs += fmt::format("('{}', '{}'), ", dist, key);
  }
  return "import importlib.metadata as metadata, os\n"
         "sites = []\n"
         "for dist, key in (" +
         pairs +
         "):\n"
         "    try:\n"
         "        found = metadata.distribution(dist)\n"
         "        print('framework.%s %s' % (key, found.version.strip()))\n"
         "        site = os.path.abspath(str(found.locate_file('')))\n"
         "        if site not in sites:\n"
         "            sites.append(site)\n"
         "            print('site-packages %s' % site)\n"
         "    except Exception:\n"
         "        pass\n"
         // Dynamo's precompiled entries hold bytecode of one Python version.
         "import platform\n"
         "print('framework.python %s' % platform.python_version())\n";
}

} // namespace

std::string_view
framework_version_script()
{
  static const std::string script = make_version_script();
  return script;
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

std::vector<std::string>
parse_site_packages(std::string_view output)
{
  constexpr std::string_view prefix = "site-packages ";
  std::vector<std::string> out;
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(prefix)) {
      continue;
    }
    auto path = line.substr(prefix.size());
    if (path.starts_with('/') && std::find(out.begin(), out.end(), path) == out.end()) {
      out.push_back(std::move(path));
    }
  }
  return out;
}

namespace {

// The "Version:" header of a METADATA file (RFC 822 style: headers end at
// the first empty line).
std::optional<std::string>
metadata_version(const std::filesystem::path& file)
{
  const auto text = read_file(file.string(), 1 << 20);
  if (!text) {
    return std::nullopt;
  }
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line) && !trim(line).empty()) {
    if (line.starts_with("Version:")) {
      return std::string(trim(std::string_view(line).substr(8)));
    }
  }
  return std::nullopt;
}

// "torch-2.11.0+cu130.dist-info" -> "torch"; names compared as packaging
// normalises them (lower case, runs of "-", "_", "." as one "_").
std::string
normalized_distribution(std::string_view name)
{
  std::string out;
  for (const char c : name) {
    const bool separator = c == '-' || c == '_' || c == '.';
    if (separator) {
      if (!out.empty() && out.back() != '_') {
        out += '_';
      }
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// The interpreter version the environment around `site_packages` records:
// <prefix>/lib/pythonX.Y/site-packages -> <prefix>/pyvenv.cfg or
// <prefix>/conda-meta/python-X.Y.Z-<build>.json.
std::optional<std::string>
recorded_python_version(const std::filesystem::path& site_packages)
{
  const auto prefix = site_packages.parent_path().parent_path().parent_path();
  if (const auto cfg = read_file((prefix / "pyvenv.cfg").string(), 1 << 16)) {
    std::istringstream lines(*cfg);
    std::string line;
    while (std::getline(lines, line)) {
      const auto equals = line.find('=');
      if (equals == std::string::npos) {
        continue;
      }
      const auto key = trim(std::string_view(line).substr(0, equals));
      auto value = std::string(trim(std::string_view(line).substr(equals + 1)));
      if (key == "version_info") {
        // virtualenv and uv: "3.11.7.final.0"
        const auto parts = std::count(value.begin(), value.end(), '.');
        for (auto i = parts; i > 2; --i) {
          value.erase(value.rfind('.'));
        }
        return value;
      }
      if (key == "version") {
        return value;
      }
    }
  }
  std::error_code ec;
  for (std::filesystem::directory_iterator it(prefix / "conda-meta", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    // python-3.11.7-h955ad1f_0.json
    const auto name = it->path().filename().string();
    if (name.starts_with("python-") && name.ends_with(".json")) {
      const auto version = name.substr(7, name.find('-', 7) - 7);
      if (!version.empty() && std::isdigit(static_cast<unsigned char>(version.front())) != 0) {
        return version;
      }
    }
  }
  return std::nullopt;
}

} // namespace

Result<FrameworkVersions>
read_framework_versions(const std::filesystem::path& site_packages)
{
  std::error_code ec;
  FrameworkVersions versions;
  std::filesystem::directory_iterator it(site_packages, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("site-packages {}: {}", in_quotes(site_packages.string()), ec.message()));
  }
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!name.ends_with(".dist-info")) {
      continue;
    }
    const auto distribution = normalized_distribution(name.substr(0, name.find('-')));
    for (const auto& [framework, key] : k_frameworks) {
      if (distribution != normalized_distribution(framework)) {
        continue;
      }
      // The same parsing as the script's output, so both sides hold one form.
      if (const auto version = metadata_version(it->path() / "METADATA")) {
        const auto parsed = parse_framework_versions(fmt::format("framework.{} {}\n", key, *version));
        versions.insert(parsed.begin(), parsed.end());
      }
    }
  }
  if (versions.empty()) {
    return fail(Errc::failed, fmt::format("site-packages {}: no torch, triton, intel-extension-for-pytorch, jax, "
                                             "jaxlib, pytensor, openvino or onnxruntime-openvino metadata "
                                             "(*.dist-info/METADATA) there",
                                             in_quotes(site_packages.string())));
  }
  if (const auto python = recorded_python_version(site_packages)) {
    const auto parsed = parse_framework_versions(fmt::format("framework.python {}\n", *python));
    versions.insert(parsed.begin(), parsed.end());
  }
  return versions;
}

FoundFrameworks
find_framework_versions(const FrameworkSearch& search, const std::string& python, std::chrono::milliseconds timeout)
{
  FoundFrameworks found;
  const auto run = [&](const std::string& interpreter) {
    if (auto versions = probe_framework_versions(interpreter, timeout)) {
      found.versions = std::move(*versions);
      found.source = interpreter;
    } else {
      found.source = versions.error().message();
    }
  };
  if (python.empty()) {
    found.source = fmt::format("{}=none", k_python_variable);
    return found;
  }
  if (framework_python_given()) {
    run(python);
    return found;
  }
  std::string missing;
  for (const auto& dir : search.site_packages) {
    if (auto versions = read_framework_versions(dir)) {
      found.versions = std::move(*versions);
      found.source = fmt::format("site-packages {}", dir.string());
      return found;
    } else {
      missing += fmt::format("{}{}", missing.empty() ? "" : "; ", versions.error().message());
    }
  }
  run(python);
  if (found.versions.empty() && !missing.empty()) {
    found.source = fmt::format("the build's {} (recorded in the bundle; mount the application's environment at that "
                               "path, or set {} to its interpreter), and {}",
                               missing, k_python_variable, found.source);
  }
  return found;
}

bool
framework_python_given()
{
  const char* value = std::getenv(std::string(k_python_variable).c_str());
  return value != nullptr && *value != '\0' && std::string_view(value) != "none";
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
