// SPDX-License-Identifier: Apache-2.0
// The model vocabulary (prewarm/model: architectures, precisions, coverage)
// that the ops and the forward passes speak unqualified. The engine declares
// it, not the model layer: a layer names nothing in the namespace of one
// above it. In prewarm::engine, so that engine::ops and engine::models (both
// link prewarm_model) see the same names; prewarm_engine itself does not
// link the model layer and never includes this.
#pragma once

#include "model/architecture.hpp"
#include "model/precision.hpp"

namespace prewarm::engine {
using model::CnnArchitecture;
using model::ConvLayer;
using model::Coverage;
using model::DecoderArchitecture;
using model::GptqLinear;
using model::GptqStackArchitecture;
using model::k_precisions;
using model::ModelArchitecture;
using model::parse_precision;
using model::Precision;
using model::precision_names;
using model::Shapes;
using model::to_string;
} // namespace prewarm::engine
