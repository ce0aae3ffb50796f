// SPDX-License-Identifier: Apache-2.0
// The two sides of OpenCL's clGet*Info convention, for the layer: asking
// (size first, then the bytes) and answering (copy if it fits, report the size).
#pragma once

#include "layer/cl_layer_api.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace prewarm::layer {

// `query(size, value, size_ret)` is one clGet*Info call with its object and
// name bound. Empty on any error.
template<typename Query>
std::string
query_bytes(Query&& query)
{
  std::size_t size = 0;
  if (query(0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return {};
  }
  std::string value(size, '\0');
  if (query(size, value.data(), nullptr) != CL_SUCCESS) {
    return {};
  }
  return value;
}

// A NUL-terminated string answer, without its NULs.
template<typename Query>
std::string
query_string(Query&& query)
{
  auto value = query_bytes(query);
  value.resize(std::strlen(value.c_str()));
  return value;
}

template<typename T, typename Query>
std::vector<T>
query_array(Query&& query)
{
  const auto bytes = query_bytes(query);
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// Answers a query the layer serves itself.
inline cl_int
answer_query(const void* data, std::size_t data_size, std::size_t size, void* value, std::size_t* size_ret)
{
  if (value != nullptr) {
    if (size < data_size) {
      return CL_INVALID_VALUE;
    }
    std::memcpy(value, data, data_size);
  }
  if (size_ret != nullptr) {
    *size_ret = data_size;
  }
  return CL_SUCCESS;
}

} // namespace prewarm::layer
