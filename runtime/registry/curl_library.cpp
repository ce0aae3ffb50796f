// SPDX-License-Identifier: Apache-2.0
#include "registry/curl_library.hpp"

#include "registry/registry_client.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

#include <mutex>

namespace prewarm::registry {

namespace {

constexpr const char* k_soname = "libcurl.so.4";

template<typename Function>
bool
look_up(void* handle, const char* name, Function& out)
{
  out = reinterpret_cast<Function>(::dlsym(handle, name));
  return out != nullptr;
}

Result<CurlLibrary>
load()
{
  // Never unloaded: libcurl keeps process-wide state from curl_global_init.
  void* handle = ::dlopen(k_soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return fail(Errc::failed,
                fmt::format("registry transfers need libcurl, which cannot be loaded ({}) (install the libcurl4 "
                            "package; a bundle in a directory installs without it)",
                            why ? why : k_soname),
                std::string(k_registry_error));
  }
  CurlLibrary lib;
  const char* missing = nullptr;
  const auto need = [&](const char* name, auto& slot) {
    if (missing == nullptr && !look_up(handle, name, slot)) {
      missing = name;
    }
  };
  need("curl_easy_init", lib.easy_init);
  need("curl_easy_cleanup", lib.easy_cleanup);
  need("curl_easy_setopt", lib.easy_setopt);
  need("curl_easy_perform", lib.easy_perform);
  need("curl_easy_getinfo", lib.easy_getinfo);
  need("curl_easy_strerror", lib.easy_strerror);
  need("curl_easy_escape", lib.easy_escape);
  need("curl_free", lib.free);
  need("curl_slist_append", lib.slist_append);
  need("curl_slist_free_all", lib.slist_free_all);
  need("curl_url", lib.url);
  need("curl_url_cleanup", lib.url_cleanup);
  need("curl_url_set", lib.url_set);
  need("curl_url_get", lib.url_get);
  decltype(&::curl_global_init) global_init = nullptr;
  need("curl_global_init", global_init);
  if (missing != nullptr) {
    return fail(Errc::failed,
                fmt::format("{} has no {} (a libcurl older than 7.62, which prewarm needs)", k_soname, missing),
                std::string(k_registry_error));
  }
  if (const CURLcode code = global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return fail(Errc::failed, fmt::format("curl_global_init failed: {}", lib.easy_strerror(code)),
                std::string(k_registry_error));
  }
  return lib;
}

} // namespace

Result<const CurlLibrary*>
curl_library()
{
  static std::once_flag once;
  static Result<CurlLibrary> loaded = fail(Errc::failed, "libcurl not loaded");
  std::call_once(once, [] { loaded = load(); });
  if (!loaded) {
    return fail(loaded.error());
  }
  return &*loaded;
}

Result<std::string>
url_escaped(std::string_view text)
{
  PW_ASSIGN(const auto* curl, curl_library());
  char* escaped = curl->easy_escape(nullptr, text.data(), static_cast<int>(text.size()));
  if (escaped == nullptr) {
    return fail(Errc::failed, "curl_easy_escape failed", std::string(k_registry_error));
  }
  std::string out(escaped);
  curl->free(escaped);
  return out;
}

} // namespace prewarm::registry
