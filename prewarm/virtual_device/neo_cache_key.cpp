// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/neo_cache_key.hpp"

#include "base/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>

namespace prewarm::virtual_device::neo {

namespace fs = std::filesystem;

namespace {

void
jenkins_mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c)
{
  // HASH_JENKINS_MIX, shared/source/helpers/hash.h:14-24.
  a -= b; a -= c; a ^= (c >> 13);
  b -= c; b -= a; b ^= (a << 8);
  c -= a; c -= b; c ^= (b >> 13);
  a -= b; a -= c; a ^= (c >> 12);
  b -= c; b -= a; b ^= (a << 16);
  c -= a; c -= b; c ^= (b >> 5);
  a -= b; a -= c; a ^= (c >> 3);
  b -= c; b -= a; b ^= (a << 10);
  c -= a; c -= b; c ^= (b >> 15);
}

template <typename T>
void
append_le(std::vector<std::uint8_t>& out, T value)
{
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<std::uint8_t>(static_cast<std::make_unsigned_t<T>>(value) >> (8 * i)));
  }
}

template <typename T>
std::span<const std::uint8_t>
le_bytes(T value, std::array<std::uint8_t, sizeof(T)>& storage)
{
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    storage[i] = static_cast<std::uint8_t>(static_cast<std::make_unsigned_t<T>>(value) >> (8 * i));
  }
  return storage;
}

} // namespace

void
NeoHash::mix_in(std::uint32_t word)
{
  m_a ^= word;
  jenkins_mix(m_a, m_hi, m_lo);
}

void
NeoHash::update(std::span<const std::uint8_t> bytes)
{
  std::size_t i = 0;
  for (; i + 4 <= bytes.size(); i += 4) {
    mix_in(std::uint32_t{bytes[i]} | std::uint32_t{bytes[i + 1]} << 8 | std::uint32_t{bytes[i + 2]} << 16 |
           std::uint32_t{bytes[i + 3]} << 24);
  }
  if (i < bytes.size()) {
    std::uint32_t tail = 0; // getValue(): the big-endian packing, shifted one byte up
    for (; i < bytes.size(); ++i) {
      tail = (tail | bytes[i]) << 8;
    }
    mix_in(tail);
  }
}

void
NeoHash::update(std::string_view text)
{
  update(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

std::uint64_t
NeoHash::of(std::span<const std::uint8_t> bytes)
{
  NeoHash hash;
  hash.update(bytes);
  return hash.finish();
}

std::array<std::uint8_t, 32>
Platform::bytes() const
{
  std::vector<std::uint8_t> out;
  for (const auto family : {product_family, pch_product_family, display_core_family, render_core_family, platform_type}) {
    append_le(out, family);
  }
  for (const auto id : {device_id, revision, device_id_pch, revision_pch}) {
    append_le(out, id);
  }
  append_le(out, gt_type);
  std::array<std::uint8_t, 32> bytes{};
  std::ranges::copy(out, bytes.begin());
  return bytes;
}

std::string
IpVersion::text() const
{
  return fmt::format("{}.{}.{}", architecture, release, revision);
}

Result<IpVersion>
IpVersion::parse(std::string_view dotted)
{
  IpVersion version;
  std::uint32_t* parts[] = {&version.architecture, &version.release, &version.revision};
  const char* at = dotted.data();
  const char* end = dotted.data() + dotted.size();
  for (std::size_t i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(at, end, *parts[i]);
    const bool separator_ok = i < 2 ? (next != end && *next == '.') : next == end;
    if (ec != std::errc{} || !separator_ok) {
      return fail(Errc::usage, fmt::format("IP version '{}' is not ARCH.RELEASE.REVISION", dotted));
    }
    at = next + 1;
  }
  if (version.architecture >= (1u << 10) || version.release >= (1u << 8) || version.revision >= (1u << 6)) {
    return fail(Errc::usage, fmt::format("IP version '{}' does not fit NEO's 10.8.6 bits", dotted));
  }
  return version;
}

std::string_view
entry_extension(CacheApi api)
{
  return api == CacheApi::opencl ? ".cl_cache" : ".l0_cache";
}

std::string
cached_file_name(const KeyInputs& in)
{
  constexpr std::string_view separator = "----";
  NeoHash hash;
  std::array<std::uint8_t, 8> u64{};
  std::array<std::uint8_t, 4> u32{};
  hash.update(separator);
  hash.update(in.igc_revision);
  hash.update(le_bytes(in.igc_lib_size, u64));
  hash.update(le_bytes(in.igc_lib_mtime, u64));
  hash.update(separator);
  hash.update(in.input);
  hash.update(separator);
  hash.update(in.options);
  hash.update(separator);
  hash.update(in.internal_options);
  hash.update(separator);
  hash.update(in.spec_ids);
  hash.update(in.spec_values);
  hash.update(separator);
  hash.update(in.platform.bytes());
  hash.update(separator);
  hash.update(std::to_string(NeoHash::of(in.feature_table)));
  hash.update(separator);
  hash.update(std::to_string(NeoHash::of(in.workaround_table)));
  hash.update(separator);
  hash.update(le_bytes(in.ip_version.value(), u32));
  return fmt::format("{:016x}", hash.finish());
}

std::string
cached_file_path(std::string_view name, CacheApi api)
{
  return fmt::format("{}/{}/{}{}", name.substr(0, 1), name.substr(1, 1), name, entry_extension(api));
}

namespace {

// The trace's sections: "---- title ----" -> the lines below it.
using Sections = std::map<std::string, std::vector<std::string>, std::less<>>;

Sections
split_sections(std::string_view text)
{
  Sections sections;
  std::vector<std::string>* current = nullptr;
  while (!text.empty()) {
    const auto end = std::min(text.find('\n'), text.size());
    const auto line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.starts_with("---- ") && line.ends_with(" ----") && line.size() > 10) {
      current = &sections[std::string(line.substr(5, line.size() - 10))];
    } else if (current != nullptr) {
      current->emplace_back(line);
    }
  }
  return sections;
}

// "%02x" of signed chars: 2 digits below 0x80, "ffffffXX" from 0x80.
std::optional<std::string>
decode_signed_hex(std::string_view text)
{
  std::string out;
  while (!text.empty()) {
    unsigned value = 0;
    if (text.size() < 2 || std::from_chars(text.data(), text.data() + 2, value, 16).ptr != text.data() + 2) {
      return std::nullopt;
    }
    if (value >= 0x80) {
      if (text.size() < 8 || !text.starts_with("ffffff") ||
          std::from_chars(text.data() + 6, text.data() + 8, value, 16).ptr != text.data() + 8 || value < 0x80) {
        return std::nullopt;
      }
      text.remove_prefix(8);
    } else {
      text.remove_prefix(2);
    }
    out.push_back(static_cast<char>(value));
  }
  return out;
}

template <std::size_t N>
std::optional<std::array<std::uint8_t, N>>
decode_dotted_bytes(std::string_view text)
{
  const auto bytes = parse_dotted_bytes(text, N);
  if (!bytes) {
    return std::nullopt;
  }
  std::array<std::uint8_t, N> out{};
  std::ranges::copy(*bytes, out.begin());
  return out;
}

// The fields of NEO's key trace, by section title and key; a field that is
// missing or unreadable is an error naming the trace file.
class TraceFields
{
public:
  TraceFields(std::string where, std::string_view text) : m_where(std::move(where)), m_sections(split_sections(text)) {}

  std::unexpected<Error> bad(std::string_view field) const
  {
    return fail(Errc::failed,
                fmt::format("{}: NEO's key trace: {} missing or unreadable (a NEO whose trace format this prewarm "
                            "does not know)",
                            m_where, field),
                "E_NEO_TRACE");
  }

  const std::vector<std::string>* section(std::string_view title) const
  {
    const auto it = m_sections.find(title);
    return it == m_sections.end() ? nullptr : &it->second;
  }

  // The fields of a section: "  key=value" lines.
  std::optional<std::string> field(std::string_view title, std::string_view key) const
  {
    if (const auto* lines = section(title)) {
      for (const auto& line : *lines) {
        const auto trimmed = std::string_view(line).substr(std::min(line.find_first_not_of(' '), line.size()));
        if (trimmed.starts_with(key) && trimmed.size() > key.size() && trimmed[key.size()] == '=') {
          return std::string(trimmed.substr(key.size() + 1));
        }
      }
    }
    return std::nullopt;
  }

  // The text of a one-value section: its lines joined (an option string may hold a newline).
  std::optional<std::string> body(std::string_view title) const
  {
    const auto* lines = section(title);
    if (lines == nullptr || lines->empty()) {
      return std::nullopt;
    }
    std::string joined;
    for (std::size_t i = 0; i < lines->size(); ++i) {
      joined += (i == 0 ? "" : "\n") + (*lines)[i];
    }
    return joined;
  }

  template<typename T>
  bool integer(std::string_view title, std::string_view key, T& out) const
  {
    const auto value = field(title, key);
    return value &&
           std::from_chars(value->data(), value->data() + value->size(), out).ptr == value->data() + value->size();
  }

private:
  std::string m_where;
  Sections m_sections;
};

} // namespace

Result<TracedEntry>
read_traced_entry(const fs::path& trace_file, IpVersion ip_version)
{
  PW_ASSIGN(const auto text, read_file(trace_file.string(), 64 << 20));
  const auto where = trace_file.string();
  const TraceFields trace(where, text);

  TracedEntry entry;
  entry.name = trace_file.stem().string();
  auto& in = entry.inputs;
  in.ip_version = ip_version;
  const auto* revision = trace.section("igcRevision");
  if (revision == nullptr || revision->empty()) {
    return trace.bad("igcRevision");
  }
  in.igc_revision = revision->front() == "(null)" ? "" : revision->front();
  if (!trace.integer("igcRevision", "libSize", in.igc_lib_size) ||
      !trace.integer("igcRevision", "libMTime", in.igc_lib_mtime)) {
    return trace.bad("libSize/libMTime");
  }
  const auto options = trace.body("options");
  const auto internal = trace.body("internal options");
  if (!options || !internal) {
    return trace.bad(options ? "internal options" : "options");
  }
  in.options = *options;
  in.internal_options = *internal;
  const auto ids = trace.field("specialization constants", "specIds");
  const auto values = trace.field("specialization constants", "specValues");
  const auto decoded_ids = ids ? decode_signed_hex(*ids) : std::nullopt;
  const auto decoded_values = values ? decode_signed_hex(*values) : std::nullopt;
  if (!decoded_ids || !decoded_values) {
    return trace.bad("specIds/specValues");
  }
  in.spec_ids = *decoded_ids;
  in.spec_values = *decoded_values;
  auto& p = in.platform;
  if (!trace.integer("platform", "eProductFamily", p.product_family) ||
      !trace.integer("platform", "ePCHProductFamily", p.pch_product_family) ||
      !trace.integer("platform", "eDisplayCoreFamily", p.display_core_family) ||
      !trace.integer("platform", "eRenderCoreFamily", p.render_core_family) ||
      !trace.integer("platform", "ePlatformType", p.platform_type) ||
      !trace.integer("platform", "usDeviceID", p.device_id) || !trace.integer("platform", "usRevId", p.revision) ||
      !trace.integer("platform", "usDeviceID_PCH", p.device_id_pch) ||
      !trace.integer("platform", "usRevId_PCH", p.revision_pch) || !trace.integer("platform", "eGTType", p.gt_type)) {
    return trace.bad("platform");
  }
  const auto features = trace.body("feature table");
  const auto workarounds = trace.body("workaround table");
  const auto feature_bytes = features ? decode_dotted_bytes<8>(*features) : std::nullopt;
  const auto workaround_bytes = workarounds ? decode_dotted_bytes<4>(*workarounds) : std::nullopt;
  if (!feature_bytes || !workaround_bytes) {
    return trace.bad(feature_bytes ? "workaround table" : "feature table");
  }
  in.feature_table = *feature_bytes;
  in.workaround_table = *workaround_bytes;

  auto input_file = trace_file;
  input_file.replace_extension(".input");
  PW_ASSIGN_CTX(in.input, fmt::format("NEO's traced input beside {}", where),
                read_file(input_file.string(), std::size_t{1} << 30));
  return entry;
}

Result<std::vector<TracedEntry>>
read_traced_entries(const fs::path& cache_dir, IpVersion ip_version)
{
  std::vector<fs::path> traces;
  std::error_code ec;
  for (const auto& file : fs::directory_iterator(cache_dir, ec)) {
    if (file.path().extension() == ".trace") {
      traces.push_back(file.path());
    }
  }
  if (ec) {
    return fail(Errc::failed, fmt::format("listing {}: {}", cache_dir.string(), ec.message()));
  }
  std::ranges::sort(traces);
  std::vector<TracedEntry> out;
  for (const auto& trace : traces) {
    PW_ASSIGN(auto entry, read_traced_entry(trace, ip_version));
    out.push_back(std::move(entry));
  }
  return out;
}

std::optional<std::vector<std::uint8_t>>
parse_dotted_bytes(std::string_view text, std::size_t count)
{
  std::vector<std::uint8_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (text.size() < 3 || text[2] != '.' ||
        std::from_chars(text.data(), text.data() + 2, out[i], 16).ptr != text.data() + 2) {
      return std::nullopt;
    }
    text.remove_prefix(3);
  }
  return text.empty() ? std::optional(out) : std::nullopt;
}

std::string
first_difference(const KeyInputs& a, const KeyInputs& b)
{
  const auto& p = a.platform;
  const auto& q = b.platform;
  const std::pair<bool, std::string_view> fields[] = {
    {a.igc_revision == b.igc_revision, "igcRevision"},
    {a.igc_lib_size == b.igc_lib_size, "libSize"},
    {a.igc_lib_mtime == b.igc_lib_mtime, "libMTime"},
    {a.input == b.input, "input"},
    {a.options == b.options, "options"},
    {a.internal_options == b.internal_options, "internal options"},
    {a.spec_ids == b.spec_ids, "specIds"},
    {a.spec_values == b.spec_values, "specValues"},
    {p.product_family == q.product_family, "platform.eProductFamily"},
    {p.pch_product_family == q.pch_product_family, "platform.ePCHProductFamily"},
    {p.display_core_family == q.display_core_family, "platform.eDisplayCoreFamily"},
    {p.render_core_family == q.render_core_family, "platform.eRenderCoreFamily"},
    {p.platform_type == q.platform_type, "platform.ePlatformType"},
    {p.device_id == q.device_id, "platform.usDeviceID"},
    {p.revision == q.revision, "platform.usRevId"},
    {p.device_id_pch == q.device_id_pch, "platform.usDeviceID_PCH"},
    {p.revision_pch == q.revision_pch, "platform.usRevId_PCH"},
    {p.gt_type == q.gt_type, "platform.eGTType"},
    {a.feature_table == b.feature_table, "feature table"},
    {a.workaround_table == b.workaround_table, "workaround table"},
    {a.ip_version == b.ip_version, "ipVersion"},
  };
  for (const auto& [same, name] : fields) {
    if (!same) {
      return std::string(name);
    }
  }
  return {};
}

} // namespace prewarm::virtual_device::neo
