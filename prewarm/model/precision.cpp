// SPDX-License-Identifier: Apache-2.0
#include "model/precision.hpp"

namespace prewarm::model {

std::string_view
to_string(Precision precision)
{
  switch (precision) {
    case Precision::fp32:
      return "fp32";
    case Precision::fp16:
      return "fp16";
    case Precision::bf16:
      return "bf16";
    case Precision::int8:
      return "int8";
  }
  return "?";
}

std::optional<Precision>
parse_precision(std::string_view name)
{
  for (const Precision precision : k_precisions) {
    if (to_string(precision) == name) {
      return precision;
    }
  }
  return std::nullopt;
}

std::string
precision_names()
{
  std::string names;
  for (const Precision precision : k_precisions) {
    names += names.empty() ? "" : ", ";
    names += to_string(precision);
  }
  return names;
}

} // namespace prewarm::model
