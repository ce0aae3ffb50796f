// SPDX-License-Identifier: Apache-2.0
#include "engine/architecture.hpp"

namespace prewarm::engine {

std::string_view
to_string(Precision precision)
{
  switch (precision) {
    case Precision::fp32:
      return "fp32";
    case Precision::fp16:
      return "fp16";
    case Precision::int8:
      return "int8";
  }
  return "?";
}

} // namespace prewarm::engine
