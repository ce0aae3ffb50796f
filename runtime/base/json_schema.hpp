// SPDX-License-Identifier: Apache-2.0
// Every JSON document prewarm and prewarm-runtime print (--json, --format
// json, build --json FILE) is an object with "schema_version": the version of
// the field names and meanings below it, raised when a field is renamed or
// removed or changes meaning (adding a field does not). Field names are
// snake_case, one name per concept across commands (signer_key_ids,
// manifest_sha256, issued_at ...). README "JSON output" lists them.
#pragma once

namespace prewarm {

inline constexpr const char* k_json_schema_version_key = "schema_version";
inline constexpr int k_json_schema_version = 1;

} // namespace prewarm
