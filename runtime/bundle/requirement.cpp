// SPDX-License-Identifier: Apache-2.0
#include "bundle/requirement.hpp"

#include "base/cpu_properties.hpp"
#include "base/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace prewarm::bundle {

namespace {

constexpr std::array<std::string_view, 18> k_exact_keys = {
  prop::vendor,           prop::opencl_platform, prop::opencl_platform_version, prop::opencl_device,
  prop::opencl_device_version, prop::opencl_driver, prop::pci_id,              prop::pci_revision,
  prop::nvidia_driver,    prop::nvidia_sm,       prop::intel_ip_version,        prop::intel_driver,
  prop::intel_igc,        prop::intel_opencl_extensions,
  prop::level_zero_device, prop::cpu_arch,       prop::cpu_isa_level,           prop::os_kernel_release,
};

bool
is_key_syntax(std::string_view key)
{
  if (key.empty() || key.size() > 128) {
    return false;
  }
  const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return lower_alnum(key[0]) &&
         std::all_of(key.begin(), key.end(), [&](char c) { return lower_alnum(c) || c == '.' || c == '-'; });
}

bool
is_version(std::string_view text)
{
  if (text.empty() || text.front() == '.' || text.back() == '.' || text.find("..") != std::string_view::npos) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// Numeric compare of two digit strings of any length.
int
compare_numbers(std::string_view a, std::string_view b)
{
  while (a.size() > 1 && a.front() == '0') {
    a.remove_prefix(1);
  }
  while (b.size() > 1 && b.front() == '0') {
    b.remove_prefix(1);
  }
  if (a.size() != b.size()) {
    return a.size() < b.size() ? -1 : 1;
  }
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::vector<std::string_view>
split_list(std::string_view text)
{
  std::vector<std::string_view> out;
  while (true) {
    const auto comma = text.find(',');
    out.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) {
      return out;
    }
    text.remove_prefix(comma + 1);
  }
}

std::vector<std::string_view>
split_list_dots(std::string_view text)
{
  std::vector<std::string_view> out;
  while (true) {
    const auto dot = text.find('.');
    out.push_back(text.substr(0, dot));
    if (dot == std::string_view::npos) {
      return out;
    }
    text.remove_prefix(dot + 1);
  }
}

std::string
describe_device(const DeviceProperties& device, std::size_t index)
{
  for (const auto key : {prop::opencl_device, prop::level_zero_device, prop::vendor}) {
    if (const auto it = device.find(key); it != device.end()) {
      return fmt::format("device {} ({})", index, it->second);
    }
  }
  return fmt::format("device {}", index);
}

std::string
describe(const Requirement& r)
{
  return fmt::format("{} {} {}", r.key, r.op, r.value);
}

} // namespace

std::string_view
to_string(RequirementOp op)
{
  switch (op) {
    case RequirementOp::equal: return "==";
    case RequirementOp::at_least: return ">=";
    case RequirementOp::less_than: return "<";
    case RequirementOp::one_of: return "in";
  }
  return "?";
}

Result<RequirementOp>
parse_requirement_op(std::string_view text)
{
  for (const auto op : {RequirementOp::equal, RequirementOp::at_least, RequirementOp::less_than, RequirementOp::one_of}) {
    if (to_string(op) == text) {
      return op;
    }
  }
  return fail(Errc::verify, fmt::format("requirement operator {} (known: ==, >=, <, in)", in_quotes(text)), "E_MANIFEST_FORMAT");
}

bool
is_known_requirement_key(std::string_view key)
{
  if (std::find(k_exact_keys.begin(), k_exact_keys.end(), key) != k_exact_keys.end()) {
    return true;
  }
  return key.size() > prop::framework_prefix.size() && key.starts_with(prop::framework_prefix) &&
         is_key_syntax(key);
}

std::string_view
why_required(std::string_view key)
{
  if (key.starts_with(prop::framework_prefix)) {
    return key == "framework.python" ? "the entries hold bytecode of this Python version"
                                     : "the framework's version, as it sees it, keys its entries: another version "
                                       "misses or rejects them";
  }
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 18> k_why{{
    {prop::vendor, "the OpenCL device's vendor (cpu: PoCL's device) whose compiler built the entries"},
    {prop::opencl_platform, "the OpenCL platform that built the entries"},
    {prop::opencl_platform_version, "the OpenCL platform version (PoCL's build) that built the entries"},
    {prop::opencl_device, "the OpenCL device the entries were built for"},
    {prop::opencl_device_version, "the OpenCL device version the entries were built for"},
    {prop::opencl_driver, "the OpenCL driver that built the entries"},
    {prop::pci_id, "the GPU model the driver compiled for"},
    {prop::pci_revision, "the GPU stepping NEO hashes into its keys"},
    {prop::nvidia_driver, "the NVIDIA driver: its ComputeCache is dropped on any driver change"},
    {prop::nvidia_sm, "the GPU architecture a cubin is for"},
    {prop::intel_ip_version, "the GPU IP version NEO's keys hash"},
    {prop::intel_driver, "the NEO release that built the entries"},
    {prop::intel_igc, "the IGC library NEO's keys hash (size and mtime)"},
    {prop::intel_opencl_extensions, "the extension list NEO's OpenCL keys hash"},
    {prop::level_zero_device, "the Level Zero device the entries were built for"},
    {prop::cpu_arch, "the entries are for this CPU architecture (made on the CPU, without OpenCL)"},
    {prop::cpu_isa_level, "the entries are machine code that may use the build CPU's instructions: a CPU of a "
                          "lower x86-64 level could fault on them"},
    {prop::os_kernel_release, "the application names its cache after the kernel release (PyTensor's compiledir): "
                              "on another kernel it looks elsewhere"},
  }};
  const auto it = std::ranges::find(k_why, key, &std::pair<std::string_view, std::string_view>::first);
  return it == k_why.end() ? std::string_view() : it->second;
}

Status
validate_requirement(const Requirement& requirement)
{
  const auto where = [&](std::string_view why) {
    return fail(Errc::verify, fmt::format("requirement {}: {}", in_quotes(describe(requirement)), why), "E_MANIFEST_FORMAT");
  };
  if (!is_key_syntax(requirement.key)) {
    return where("key is not of the form [a-z0-9][a-z0-9.-]*");
  }
  if (!is_known_requirement_key(requirement.key)) {
    return fail(Errc::verify,
                fmt::format("requirement {}: unknown key {} (the bundle was made by a newer prewarm; "
                            "a requirement this version cannot evaluate is never ignored)",
                            in_quotes(describe(requirement)), in_quotes(requirement.key)),
                "E_UNKNOWN_REQUIREMENT");
  }
  PW_ASSIGN(const auto op, parse_requirement_op(requirement.op));
  if (requirement.value.empty()) {
    return where("empty value");
  }
  switch (op) {
    case RequirementOp::at_least:
    case RequirementOp::less_than:
      if (!is_version(requirement.value)) {
        return where("value is not a dotted numeric version");
      }
      break;
    case RequirementOp::one_of:
      for (const auto item : split_list(requirement.value)) {
        if (item.empty()) {
          return where("empty item in the comma list");
        }
      }
      break;
    case RequirementOp::equal:
      break;
  }
  return {};
}

Result<int>
compare_versions(std::string_view left, std::string_view right)
{
  for (const auto side : {left, right}) {
    if (!is_version(side)) {
      return fail(Errc::usage, fmt::format("{} is not a dotted numeric version", in_quotes(side)));
    }
  }
  const auto a = split_list_dots(left);
  const auto b = split_list_dots(right);
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string_view x = i < a.size() ? a[i] : std::string_view("0");
    const std::string_view y = i < b.size() ? b[i] : std::string_view("0");
    if (const int c = compare_numbers(x, y); c != 0) {
      return c;
    }
  }
  return 0;
}

Result<RequirementCheck>
check_requirement(const Requirement& requirement, const DeviceProperties& device)
{
  PW_TRY(validate_requirement(requirement));
  PW_ASSIGN(const auto op, parse_requirement_op(requirement.op));
  const auto it = device.find(requirement.key);
  if (it == device.end()) {
    // Framework versions come from the application's interpreter, which the
    // host probe may not have found (host/framework_probe.hpp).
    return RequirementCheck{false, requirement.key.starts_with(prop::framework_prefix)
                                     ? "unknown (no such package found by PREWARM_PYTHON, default python3)"
                                     : "unknown"};
  }
  const std::string& actual = it->second;
  bool satisfied = false;
  switch (op) {
    case RequirementOp::equal:
      satisfied = actual == requirement.value;
      break;
    case RequirementOp::one_of: {
      const auto items = split_list(requirement.value);
      satisfied = std::find(items.begin(), items.end(), actual) != items.end();
      break;
    }
    case RequirementOp::at_least:
    case RequirementOp::less_than: {
      // A device value that is not a version cannot be ordered: the
      // requirement fails (and the reason shows the value).
      const auto c = compare_versions(actual, requirement.value);
      satisfied = c && (op == RequirementOp::at_least ? *c >= 0 : *c < 0);
      if (!c) {
        return RequirementCheck{false, actual + " (not a version)"};
      }
      break;
    }
  }
  return RequirementCheck{satisfied, actual};
}

namespace {

// Inputs of a driver cache's key (docs/research/neo-cache-key.md §1-2): a host
// whose value differs computes other names, so the slice's entries can only
// miss. A mismatch is said as "KEY: host A, slice B (what it costs)".
struct KeyInput
{
  std::string_view key;
  std::string_view cost;
};
constexpr std::array<KeyInput, 3> k_key_inputs = {{
  {prop::intel_igc, "the IGC library differs: NEO's cache key hashes its size and mtime, so entries made with "
                    "another IGC build can only miss"},
  {prop::intel_ip_version, "NEO would miss every entry"},
  {prop::intel_opencl_extensions, "NEO's OpenCL key hashes the extension list: every .cl_cache entry would miss"},
}};

const KeyInput*
key_input(std::string_view key)
{
  const auto it = std::ranges::find(k_key_inputs, key, &KeyInput::key);
  return it == k_key_inputs.end() ? nullptr : &*it;
}

std::string
describe_failure(const Requirement& r, const RequirementCheck& check, const DeviceProperties& device,
                 std::size_t index)
{
  if (const auto* input = key_input(r.key)) {
    const auto slice_value = r.op == "==" ? r.value : fmt::format("{} {}", r.op, r.value);
    return fmt::format("{}: host {}, slice {} ({}) on {}", r.key, check.actual, slice_value, input->cost,
                       describe_device(device, index));
  }
  return fmt::format("requirement {}: {} has {}", in_quotes(describe(r)), describe_device(device, index),
                     check.actual);
}

bool
holds_kind(const Slice& slice, std::string_view kind, std::string_view extension = {})
{
  return std::ranges::any_of(slice.files, [&](const FileEntry& f) {
    return f.path.starts_with(kind) && f.path.size() > kind.size() && f.path[kind.size()] == '/' &&
           f.path.ends_with(extension);
  });
}

bool
requires_key(const Slice& slice, std::string_view key)
{
  return std::ranges::any_of(slice.requirements, [&](const Requirement& r) { return r.key == key; });
}

} // namespace

std::vector<std::string>
unchecked_key_inputs(const Slice& slice)
{
  std::vector<std::string> out;
  if (holds_kind(slice, "neo")) {
    for (const auto key : {prop::intel_igc, prop::intel_ip_version, prop::pci_id, prop::pci_revision}) {
      if (!requires_key(slice, key)) {
        out.emplace_back(key);
      }
    }
    if (holds_kind(slice, "neo", ".cl_cache") && !requires_key(slice, prop::intel_opencl_extensions)) {
      out.emplace_back(prop::intel_opencl_extensions);
    }
  }
  if (holds_kind(slice, "sycl") && !requires_key(slice, prop::opencl_device)) {
    out.emplace_back(prop::opencl_device);
  }
  return out;
}

std::string
describe_unchecked_key_inputs(const Slice& slice)
{
  const auto keys = unchecked_key_inputs(slice);
  if (keys.empty()) {
    return {};
  }
  std::string list;
  for (const auto& key : keys) {
    list += (list.empty() ? "" : ", ") + key;
  }
  return fmt::format("key inputs not known for its target: {} (the driver hashes them; whether this host's "
                     "values match is not checked, so entries may miss)",
                     list);
}

SliceMatch
match_slice(const Slice& slice, std::span<const DeviceProperties> host_devices)
{
  if (slice.requirements.empty()) {
    return SliceMatch{true, "any device (the slice has no requirements)", 0, {}};
  }
  if (host_devices.empty()) {
    return SliceMatch{false, "no device", 0, "this host reports no devices"};
  }
  SliceMatch best;
  std::size_t best_satisfied = 0;
  bool have_best = false;
  for (std::size_t i = 0; i < host_devices.size(); ++i) {
    const auto& device = host_devices[i];
    std::size_t satisfied = 0;
    std::string first_failure;
    for (const auto& r : slice.requirements) {
      auto check = check_requirement(r, device);
      if (!check) {
        // Not evaluable on any device: say so, whichever device is "best".
        return SliceMatch{false, describe_device(device, i), i, check.error().message()};
      }
      if (check->satisfied) {
        ++satisfied;
      } else if (first_failure.empty()) {
        first_failure = describe_failure(r, *check, device, i);
      }
    }
    if (first_failure.empty()) {
      return SliceMatch{true, describe_device(device, i), i, {}};
    }
    if (!have_best || satisfied > best_satisfied) {
      have_best = true;
      best_satisfied = satisfied;
      best = SliceMatch{false, describe_device(device, i), i, std::move(first_failure)};
    }
  }
  return best;
}

} // namespace prewarm::bundle
