// SPDX-License-Identifier: Apache-2.0
#include "push/registry_push.hpp"

#include "base/digest.hpp"
#include "base/log.hpp"
#include "registry/registry_fetch.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace prewarm::push {

namespace {

using registry::HttpRequest;
using registry::HttpResponse;
using registry::RegistryClient;

HttpRequest
make_request(std::string method, std::string path, std::vector<std::string> headers = {}, std::string body = {})
{
  HttpRequest request;
  request.method = std::move(method);
  request.path = std::move(path);
  request.headers = std::move(headers);
  request.body = std::move(body);
  return request;
}

// One request with the client's retries; `expected` statuses are success.
Result<HttpResponse>
send_expecting(RegistryClient& client, const HttpRequest& request, std::initializer_list<long> expected,
               std::string_view what)
{
  return client.with_retries<HttpResponse>(what, [&]() -> Result<HttpResponse> {
    PW_ASSIGN(auto response, client.send(request));
    PW_TRY(registry::expect_status(response, expected, what));
    return response;
  });
}

Result<bool>
push_blob(RegistryClient& client, const std::string& repository, const ArtifactBlob& blob)
{
  const auto& d = blob.descriptor;
  const auto head = make_request("HEAD", fmt::format("/v2/{}/blobs/{}", repository, d.digest));
  PW_ASSIGN(const auto present, send_expecting(client, head, {200, 404}, fmt::format("HEAD blob {}", d.digest)));
  if (present.status == 200) {
    return false;
  }
  const auto start = make_request("POST", fmt::format("/v2/{}/blobs/uploads/", repository));
  PW_ASSIGN(const auto started, send_expecting(client, start, {202}, fmt::format("upload of {}", d.digest)));
  auto location = started.header("location");
  if (location.empty()) {
    return fail(Errc::failed, fmt::format("upload of {}: the registry gave no Location", d.digest), "E_REGISTRY");
  }
  location += (location.find('?') == std::string::npos ? "?" : "&") + fmt::format("digest={}", d.digest);
  auto put = make_request("PUT", location, {"Content-Type: application/octet-stream"});
  put.body = blob.bytes;
  put.upload_file = blob.file;
  PW_TRY(send_expecting(client, put, {201, 204}, fmt::format("PUT blob {}", d.digest)));
  log::verbose("uploaded {} ({} bytes, {})", d.digest, d.size, d.media_type);
  return true;
}

// The referrers fallback: the index under sha256-<hex>, with `entry` added.
Status
update_referrers_tag(RegistryClient& client, const std::string& repository, const std::string& subject_digest,
                     const BundleArtifact& artifact)
{
  const auto tag = registry::referrers_tag(subject_digest);
  const auto what = fmt::format("referrers tag {}", tag);
  const auto get = make_request("GET", fmt::format("/v2/{}/manifests/{}", repository, tag),
                                {fmt::format("Accept: {}", registry::k_image_index_type)});
  PW_ASSIGN(const auto current, send_expecting(client, get, {200, 404}, what));
  auto index = nlohmann::ordered_json{{"schemaVersion", 2},
                                      {"mediaType", registry::k_image_index_type},
                                      {"manifests", nlohmann::ordered_json::array()}};
  if (current.status == 200) {
    PW_ASSIGN_CTX(const auto parsed, what, registry::parse_oci_index(current.body)); // strict, as the runtime reads it
    (void)parsed;
    index = nlohmann::ordered_json::parse(current.body);
  }
  auto& manifests = index["manifests"];
  for (const auto& entry : manifests) {
    if (entry.value("digest", "") == artifact.manifest_descriptor.digest) {
      return {}; // already listed
    }
  }
  manifests.push_back(nlohmann::ordered_json::parse(descriptor_json(artifact)));
  const auto put = make_request("PUT", get.path, {fmt::format("Content-Type: {}", registry::k_image_index_type)},
                                index.dump());
  PW_TRY(send_expecting(client, put, {201}, what));
  return {};
}

} // namespace

Result<registry::Descriptor>
resolve_subject(const registry::ImageReference& image, const registry::ClientOptions& options)
{
  PW_ASSIGN(auto client, RegistryClient::create(image.registry, options));
  const auto what = fmt::format("subject {}", image.to_string());
  const auto get = make_request("GET", fmt::format("/v2/{}/manifests/{}", image.repository, image.digest),
                                {fmt::format("Accept: {}, {}, {}, {}", registry::k_image_manifest_type,
                                             registry::k_image_index_type, registry::k_docker_manifest_type,
                                             registry::k_docker_list_type)});
  PW_ASSIGN(const auto response, send_expecting(client, get, {200}, what));
  if ("sha256:" + sha256_hex(response.body) != image.digest) {
    return fail(Errc::verify, fmt::format("{}: the registry sent a document with another digest", what), "E_OCI_DIGEST");
  }
  auto media_type = response.header("content-type");
  const auto document = nlohmann::json::parse(response.body, nullptr, false);
  if (document.is_object() && document.contains("mediaType") && document["mediaType"].is_string()) {
    media_type = document["mediaType"].get<std::string>();
  }
  return registry::Descriptor{media_type, image.digest, response.body.size(), {}, {}};
}

Result<PushResult>
push_to_registry(const BundleArtifact& artifact, const registry::ImageReference& target,
                 const registry::ClientOptions& options)
{
  PW_ASSIGN(auto client, RegistryClient::create(target.registry, options));
  PushResult result;
  result.digest = artifact.manifest_descriptor.digest;
  for (const auto& blob : artifact.blobs) {
    PW_ASSIGN(const bool uploaded, push_blob(client, target.repository, blob));
    ++(uploaded ? result.blobs_uploaded : result.blobs_present);
  }
  const auto reference = target.tag.empty() ? result.digest : target.tag;
  const auto what = fmt::format("PUT manifest {}", target.to_string());
  const auto put = make_request("PUT", fmt::format("/v2/{}/manifests/{}", target.repository, reference),
                                {fmt::format("Content-Type: {}", registry::k_image_manifest_type)}, artifact.manifest);
  PW_ASSIGN(const auto response, send_expecting(client, put, {201}, what));
  if (const auto echoed = response.header("docker-content-digest"); !echoed.empty() && echoed != result.digest) {
    return fail(Errc::failed, fmt::format("{}: the registry stored digest {}, prewarm computed {}", what, echoed,
                                          result.digest),
                "E_REGISTRY");
  }
  if (!target.digest.empty() && target.digest != result.digest) {
    return fail(Errc::usage, fmt::format("{}: the bundle's artifact has digest {}", target.to_string(), result.digest));
  }
  const auto subject = nlohmann::json::parse(artifact.manifest).value("subject", nlohmann::json());
  if (subject.is_object()) {
    if (response.header("oci-subject").empty()) {
      log::info("{} has no referrers API (no OCI-Subject): updating the tag {}", target.registry,
                registry::referrers_tag(subject["digest"].get<std::string>()));
      PW_TRY(update_referrers_tag(client, target.repository, subject["digest"].get<std::string>(), artifact));
      result.referrers_tag_updated = true;
    }
  }
  return result;
}

} // namespace prewarm::push
