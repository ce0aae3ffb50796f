// SPDX-License-Identifier: Apache-2.0
// The calls below the layer: the loader's table handed to clInitLayer (layer
// build), or the functions dlsym(RTLD_NEXT) finds (LD_PRELOAD build). Every
// call the layer makes goes through it, never through the loader's exports,
// which would enter the layer again.
#pragma once

#include "layer/cl_layer_api.hpp"

namespace prewarm::layer {

const cl_icd_dispatch& next();
void set_next(const cl_icd_dispatch* dispatch);

} // namespace prewarm::layer
