// SPDX-License-Identifier: Apache-2.0
// libcurl, loaded at the first registry request rather than linked. libcurl
// and what it brings (TLS, HTTP/2, IDN, Kerberos, LDAP, SSH: 35 of the 53
// libraries prewarm-runtime-full mapped) cost every start of the program about
// 4 ms, and only a pull or a push talks to a registry: a repeated install at
// container start should not pay for them. The types and constants are the
// ones of the headers compiled against; the functions are looked up in the
// library of the same ABI (libcurl.so.4, the soname since curl 7.16).
#pragma once

#include "base/error.hpp"

#include <curl/curl.h>

#include <string>
#include <string_view>

namespace prewarm::registry {

// The libcurl functions this layer calls, as the headers declare them. A
// call through `easy_setopt` is not checked by curl's compile-time option
// type checks (typecheck-gcc.h wraps only the named function): pass the type
// each option's documentation names (long, curl_off_t, char*, a callback).
struct CurlLibrary
{
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_perform) easy_perform = nullptr;
  decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_easy_escape) easy_escape = nullptr;
  decltype(&::curl_free) free = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
  decltype(&::curl_url) url = nullptr;
  decltype(&::curl_url_cleanup) url_cleanup = nullptr;
  decltype(&::curl_url_set) url_set = nullptr;
  decltype(&::curl_url_get) url_get = nullptr;
};

// The library, loaded and initialised (curl_global_init) once per process;
// an error (E_REGISTRY) names the library and the package that provides it.
Result<const CurlLibrary*> curl_library();

// TEXT percent-encoded for a URL query (curl_easy_escape).
Result<std::string> url_escaped(std::string_view text);

} // namespace prewarm::registry
