// SPDX-License-Identifier: Apache-2.0
#include "bundle/openssl_error.hpp"

#include <openssl/err.h>

namespace prewarm::bundle {

std::string
openssl_error()
{
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) {
    return "no detail from OpenSSL";
  }
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof buffer);
  return buffer;
}

} // namespace prewarm::bundle
