// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/neo_synthesis.hpp"

#include "virtual_device/neo_extension_list.hpp"

#include "base/files.hpp"
#include "jobs/job_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>

namespace prewarm::virtual_device::neo {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_bindless = "-cl-intel-use-bindless-mode -cl-intel-use-bindless-advanced-mode";
constexpr std::string_view k_ze_buffer_offset = "-ze-intel-has-buffer-offset-arg";

Result<std::uint16_t>
hex_id(const manifest::IntelProfile& profile, std::string_view field, std::string_view text)
{
  std::uint16_t value = 0;
  const auto digits = text.substr(std::min<std::size_t>(2, text.size()));
  if (!text.starts_with("0x") || std::from_chars(digits.data(), digits.data() + digits.size(), value, 16).ptr !=
                                    digits.data() + digits.size()) {
    return fail(Errc::usage, fmt::format("{}: {}: '{}' is not a hex id", profile.source_name, field, text));
  }
  return value;
}

template <std::size_t N>
Result<std::optional<std::array<std::uint8_t, N>>>
table(const manifest::IntelProfile& profile, std::string_view field, const manifest::ProfileValue& value)
{
  if (value.value == manifest::k_table_from_virtual_device) {
    return std::optional<std::array<std::uint8_t, N>>{};
  }
  const auto bytes = parse_dotted_bytes(value.value, N);
  if (!bytes) {
    return fail(Errc::usage, fmt::format("{}: {}: '{}' is not {} bytes", profile.source_name, field, value.value, N));
  }
  std::array<std::uint8_t, N> out{};
  std::ranges::copy(*bytes, out.begin());
  return std::optional(out);
}

} // namespace

namespace {

// `wanted` inserted into a device's extension names where NEO lists them:
// CL_DEVICE_EXTENSIONS order, sharing extensions (GL, VA, then the format
// query: sharing_factory.cpp:28-45) then cl_khr_pci_bus_info last
// (cl_device_caps.cpp:165-183). "end": after every name.
Status
insert_extensions(std::vector<std::string>& names, const std::vector<const manifest::AddedExtension*>& wanted,
                  std::string_view target)
{
  for (const auto* extension : wanted) {
    if (std::ranges::find(names, extension->name) != names.end()) {
      continue;
    }
    auto at = names.end();
    if (extension->after != "end") {
      const auto anchor = std::ranges::find(names, extension->after);
      if (anchor == names.end()) {
        return fail(Errc::failed,
                    fmt::format("{}: opencl.extensions.add {}: the device's extension list has no {} to follow", target,
                                extension->name, extension->after));
      }
      at = anchor + 1;
    }
    names.insert(at, extension->name);
  }
  return {};
}

// The card's device extension lists from a device's names: the profile's
// measured list where it has one, else `device`; without the extensions
// listed only where libva loads, then (where there are such) with them.
Result<std::vector<std::vector<std::string>>>
card_lists(const manifest::IntelProfile* profile, std::vector<std::string> device,
           const std::vector<manifest::AddedExtension>& added, std::string_view target)
{
  if (profile != nullptr && profile->opencl_extensions_measured) {
    device = split_names(profile->opencl_extensions_measured->value);
  }
  std::vector<const manifest::AddedExtension*> always;
  std::vector<const manifest::AddedExtension*> all;
  for (const auto& extension : added) {
    all.push_back(&extension);
    if (extension.when == manifest::AddedExtension::When::always) {
      always.push_back(&extension);
    } else {
      std::erase(device, extension.name); // the host decides: both variants are made
    }
  }
  std::vector<std::vector<std::string>> lists{device};
  PW_TRY(insert_extensions(lists.front(), always, target));
  if (all.size() != always.size()) {
    lists.push_back(device);
    PW_TRY(insert_extensions(lists.back(), all, target));
  }
  return lists;
}

std::string
joined(const std::vector<std::string>& names, std::string_view separator)
{
  std::string out;
  for (const auto& n : names) {
    out += (out.empty() ? "" : std::string(separator)) + n;
  }
  return out;
}

} // namespace

Result<CardKey>
card_key(const manifest::IntelProfile& profile, std::string_view recorder_extensions)
{
  CardKey card;
  card.target = profile.target;
  PW_ASSIGN(card.device_id, hex_id(profile, "key.device_id", profile.device_id.value));
  PW_ASSIGN(card.revision, hex_id(profile, "key.revision", profile.revision.value));
  PW_ASSIGN_CTX(card.ip_version, fmt::format("{}: key.ip_version", profile.source_name),
                IpVersion::parse(profile.ip_version.value));
  PW_ASSIGN(card.feature_table, table<8>(profile, "key.feature_table", profile.feature_table));
  PW_ASSIGN(card.workaround_table, table<4>(profile, "key.workaround_table", profile.workaround_table));
  if (profile.opencl_bindless.value) {
    // NEO 26.27 puts OpenCL's bindless options mid-list (program.cpp:89-91);
    // no Intel target uses them, so their place is not modelled.
    return fail(Errc::usage,
                fmt::format("{}: opencl.bindless true is not supported by synthesis", profile.source_name));
  }
  card.level_zero_bindless = profile.level_zero_bindless.value;
  card.opencl_extensions = profile.opencl_extensions_added;
  card.recorder_extensions = split_names(recorder_extensions);
  if (!card.recorder_extensions.empty() || profile.opencl_extensions_measured) {
    PW_ASSIGN_CTX(card.extension_lists, profile.source_name,
                  card_lists(&profile, card.recorder_extensions, card.opencl_extensions, card.target));
  }
  return card;
}

namespace {

Result<std::vector<std::string>>
level_zero_options(std::string_view recorded, const CardKey& card)
{
  const bool recorded_bindless = recorded.find(k_bindless) != std::string_view::npos;
  if (recorded_bindless == card.level_zero_bindless) {
    return std::vector<std::string>{std::string(recorded)};
  }
  if (recorded_bindless) {
    return fail(Errc::failed,
                fmt::format("{}: level_zero.bindless is false but the recording used bindless mode", card.target));
  }
  // generateCompilerOptions: concatenate(<build flags' internal part, then bindless>, hasBufferOffsetArg, ...)
  const auto at = recorded.find(k_ze_buffer_offset);
  if (at == std::string_view::npos) {
    return fail(Errc::failed, fmt::format("{}: the recorded Level Zero internal options lack {} (where NEO puts "
                                          "the bindless options)",
                                          card.target, k_ze_buffer_offset));
  }
  return std::vector<std::string>{fmt::format("{}{} {}", recorded.substr(0, at), k_bindless, recorded.substr(at))};
}

} // namespace

Result<std::vector<std::string>>
card_internal_options(std::string_view recorded, std::string_view options, CacheApi api, const CardKey& card)
{
  if (api == CacheApi::level_zero) {
    return level_zero_options(recorded, card);
  }
  const auto place = find_extension_list(recorded);
  if (!place) {
    return fail(Errc::failed, "the recorded OpenCL internal options have no -cl-ext= list");
  }
  if (card.recorder_extensions.empty() || card.extension_lists.empty()) {
    return fail(Errc::failed, "the virtual device's extension list is not known");
  }
  const auto features = recorded_features(*place, options);
  // NEO's construction must give the recorded list back from the virtual
  // device's own extensions before it is trusted with the card's.
  const auto own = compiler_extensions(card.recorder_extensions, features, options, place->before);
  if (own != place->list) {
    return fail(Errc::failed, fmt::format("NEO's -cl-ext= rule does not give the recorded list for options '{}' "
                                          "(recorded '{}', constructed '{}')",
                                          options, place->list, own));
  }
  std::vector<std::string> variants;
  for (const auto& list : card.extension_lists) {
    variants.push_back(place->before + compiler_extensions(list, features, options, place->before) + place->after);
  }
  return variants;
}

Result<std::vector<std::string>>
card_extension_lists(std::string_view device_extensions, const CardKey& card)
{
  PW_ASSIGN(const auto lists, card_lists(nullptr, split_names(device_extensions), card.opencl_extensions, card.target));
  std::vector<std::string> out;
  for (const auto& list : lists) {
    out.push_back(joined(list, " "));
  }
  return out;
}

Result<std::vector<RecordedEntry>>
recorded_entries(const fs::path& cache_dir, IpVersion ip_version)
{
  PW_ASSIGN(auto traced, read_traced_entries(cache_dir, ip_version));
  std::vector<RecordedEntry> out;
  for (auto& entry : traced) {
    RecordedEntry recorded;
    bool found = false;
    for (const auto api : {CacheApi::opencl, CacheApi::level_zero}) {
      const auto path = cached_file_path(entry.name, api);
      if (fs::is_regular_file(cache_dir / path)) {
        recorded.api = api;
        recorded.path = path;
        found = true;
      }
    }
    if (!found) {
      // NEO traces a name before the build; a build that failed leaves no entry
      continue;
    }
    recorded.traced = std::move(entry);
    out.push_back(std::move(recorded));
  }
  return out;
}

Result<std::vector<KeyInputs>>
card_inputs(const RecordedEntry& recorded, const CardKey& card)
{
  PW_ASSIGN(auto options, card_internal_options(recorded.traced.inputs.internal_options, recorded.traced.inputs.options,
                                                recorded.api, card));
  std::vector<KeyInputs> out;
  for (auto& internal : options) {
    auto inputs = recorded.traced.inputs;
    inputs.internal_options = std::move(internal);
    inputs.platform.device_id = card.device_id;
    inputs.platform.revision = card.revision;
    inputs.ip_version = card.ip_version;
    if (card.feature_table) {
      inputs.feature_table = *card.feature_table;
    }
    if (card.workaround_table) {
      inputs.workaround_table = *card.workaround_table;
    }
    out.push_back(std::move(inputs));
  }
  return out;
}

namespace {

aot::OclocInput
input_kind(std::string_view input)
{
  const auto word = [&](std::size_t at) {
    return std::uint32_t{static_cast<unsigned char>(input[at])} |
           std::uint32_t{static_cast<unsigned char>(input[at + 1])} << 8 |
           std::uint32_t{static_cast<unsigned char>(input[at + 2])} << 16 |
           std::uint32_t{static_cast<unsigned char>(input[at + 3])} << 24;
  };
  if (input.size() >= 4 && word(0) == 0x07230203) {
    return aot::OclocInput::spirv;
  }
  if (input.starts_with("BC\xc0\xde")) {
    return aot::OclocInput::llvm_bitcode;
  }
  return aot::OclocInput::opencl_c;
}

// Whether an entry's two internal-options variants (without and with the
// extensions listed only where libva loads) compile to the same binary, so
// that one ocloc compile serves both names. Those extensions are host-API
// extensions (cl_intel_va_api_media_sharing: no OpenCL C builtin), which an
// OpenCL C program sees only through their macro, by name: a source that
// never names them, with no include path a header could name them from,
// compiles the same either way. ocloc 26.27 gives identical bytes there
// (tests/integration/intel_synth checks it on the engine's programs). SPIR-V
// is compiled twice: its front end ran elsewhere, with its own list.
bool
libva_variants_share_binary(const RecordedEntry& entry, const CardKey& card)
{
  const auto& in = entry.traced.inputs;
  if (entry.api != CacheApi::opencl || input_kind(in.input) != aot::OclocInput::opencl_c ||
      in.options.find("-I") != std::string::npos) {
    return false;
  }
  return std::ranges::none_of(card.opencl_extensions, [&](const manifest::AddedExtension& extension) {
    return extension.when == manifest::AddedExtension::When::libva && in.input.find(extension.name) != std::string::npos;
  });
}

// One compile per (recorded entry, internal-options variant), or the reason
// the entry is left out.
struct Compile
{
  const RecordedEntry* entry = nullptr;
  std::optional<KeyInputs> inputs; // nullopt: skipped for `skip`
  std::string skip;
  std::optional<std::size_t> binary_of; // the compile whose binary this one's is (not compiled again)
};

// What one compile wrote.
struct Made
{
  std::string path; // empty: skipped
  std::uint64_t bytes = 0;
  std::string skip;
};

// The key inputs first (cheap): an entry the construction cannot take is
// left out with the reason before any compile.
std::vector<Compile>
planned_compiles(const std::vector<RecordedEntry>& recorded, const CardKey& card)
{
  std::vector<Compile> compiles;
  for (const auto& entry : recorded) {
    if (!entry.traced.inputs.spec_ids.empty()) {
      compiles.push_back(
        {&entry, std::nullopt, fmt::format("{}: specialisation constants", entry.traced.name), std::nullopt});
      continue;
    }
    auto variants = card_inputs(entry, card);
    if (!variants) {
      // This entry is left out, not the slice: the card compiles it itself.
      compiles.push_back(
        {&entry, std::nullopt, fmt::format("{}: {}", entry.traced.name, variants.error().message()), std::nullopt});
      continue;
    }
    const auto first = compiles.size();
    const bool shared = variants->size() > 1 && libva_variants_share_binary(entry, card);
    for (auto& inputs : *variants) {
      compiles.push_back({&entry, std::move(inputs), {}, std::nullopt});
      if (shared && compiles.size() > first + 1) {
        compiles.back().binary_of = first;
      }
    }
  }
  return compiles;
}

// One ocloc compile, written under its card name.
Result<Made>
compile_one(const aot::Ocloc& ocloc, const Compile& compile, const CardKey& card, const fs::path& out_dir)
{
  if (!compile.inputs) {
    return Made{{}, 0, compile.skip};
  }
  if (compile.binary_of) {
    return Made{}; // written afterwards, from its twin's binary
  }
  const auto& entry = *compile.entry;
  const auto& in = entry.traced.inputs;
  const auto& inputs = *compile.inputs;
  aot::OclocCompileRequest request;
  request.source_name = entry.traced.name;
  request.input = input_kind(in.input);
  // Direct mode hashes the source with its NUL; ocloc takes the text.
  std::string_view source = in.input;
  if (request.input == aot::OclocInput::opencl_c && source.ends_with('\0')) {
    source.remove_suffix(1);
  }
  request.source = source;
  request.options = in.options;
  request.internal_options = inputs.internal_options;
  // Bindless exactly where NEO's internal options say so: ocloc would add it by itself.
  if (inputs.internal_options.find("-cl-intel-use-bindless") == std::string::npos) {
    request.stateful_address_mode = "bindful";
  }
  request.device = card.ip_version.text();
  auto output = ocloc.compile(request);
  if (!output) {
    // This entry is left out, not the slice: the card compiles it itself.
    return Made{{}, 0, fmt::format("{}: ocloc: {}", entry.traced.name, output.error().message())};
  }
  const auto path = cached_file_path(cached_file_name(inputs), entry.api);
  std::error_code ec;
  fs::create_directories((out_dir / path).parent_path(), ec);
  PW_TRY(write_file_atomic(out_dir / path, output->zebin, 0644, Durability::none));
  return Made{path, output->zebin.size(), {}};
}

// The second name of a program whose two libva variants share one binary.
Status
write_twins(const std::vector<Compile>& compiles, std::vector<std::optional<Made>>& by_compile, const fs::path& out_dir)
{
  for (std::size_t i = 0; i < compiles.size(); ++i) {
    const auto& twin = compiles[i].binary_of;
    if (!twin) {
      continue;
    }
    auto& m = *by_compile[i];
    const auto& of = *by_compile[*twin];
    if (of.path.empty()) {
      m.skip = of.skip; // the same compile failed: the same reason
      continue;
    }
    PW_ASSIGN(const auto zebin, read_file((out_dir / of.path).string()));
    m.path = cached_file_path(cached_file_name(*compiles[i].inputs), compiles[i].entry->api);
    std::error_code ec;
    fs::create_directories((out_dir / m.path).parent_path(), ec);
    PW_TRY(write_file_atomic(out_dir / m.path, zebin, 0644, Durability::none));
    m.bytes = of.bytes;
  }
  return {};
}

} // namespace

Result<SynthesisResult>
synthesize(const aot::Ocloc& ocloc, const std::vector<RecordedEntry>& recorded, const CardKey& card,
           const fs::path& out_dir, unsigned jobs)
{
  const auto started = std::chrono::steady_clock::now();
  const auto compiles = planned_compiles(recorded, card);
  // The compiles are independent ocloc processes: on the build's job pool
  // (--jobs), the largest input first (as the AOT compiles: a long compile
  // started last would run alone at the end). Every result lands in its
  // compile's slot, so the entries, their order and the skip list are the
  // same at any job count.
  const auto order = prewarm::jobs::longest_first(compiles.size(), [&](std::size_t i) {
    return compiles[i].binary_of ? 0 : compiles[i].entry->traced.inputs.input.size();
  });
  auto made = prewarm::jobs::run_jobs<Made>(compiles.size(), jobs, [&](std::size_t position) {
    return compile_one(ocloc, compiles[order[position]], card, out_dir);
  });
  std::vector<std::optional<Made>> by_compile(compiles.size());
  for (std::size_t position = 0; position < made.size(); ++position) {
    if (!made[position]) {
      return fail(made[position].error());
    }
    by_compile[order[position]] = std::move(*made[position]);
  }
  PW_TRY(write_twins(compiles, by_compile, out_dir));
  SynthesisResult result;
  for (auto& m : by_compile) {
    if (m->path.empty()) {
      result.skipped.push_back(std::move(m->skip));
      continue;
    }
    result.bytes += m->bytes;
    result.entries.push_back(std::move(m->path));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace prewarm::virtual_device::neo
