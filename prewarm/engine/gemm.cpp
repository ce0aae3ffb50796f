// SPDX-License-Identifier: Apache-2.0
#include "engine/gemm.hpp"

#include <fmt/format.h>

namespace prewarm::engine {

Status
run_gemm(Session& session, const GemmArgs& args, const Defines& precision, int tile)
{
  if (args.a.buffer == nullptr || args.b.buffer == nullptr || args.c.buffer == nullptr || args.m <= 0 || args.n <= 0 ||
      args.k <= 0 || args.batches <= 0 || args.b_batch_group <= 0 || tile <= 0) {
    return fail(Errc::internal, fmt::format("gemm: invalid arguments (m={} n={} k={} batches={} group={} tile={})", args.m,
                                            args.n, args.k, args.batches, args.b_batch_group, tile));
  }
  Defines defines = precision;
  defines.set("TILE", tile).set("TRANSPOSE_B", args.b_layout == BLayout::transposed ? 1 : 0);
  PW_ASSIGN(Kernel kernel, session.kernel("gemm.cl", "gemm", defines));
  const DeviceBuffer& residual = args.residual != nullptr ? *args.residual : *args.c.buffer;
  KernelArgs kernel_args;
  kernel_args.value(cl_int{args.m}).value(cl_int{args.n}).value(cl_int{args.k});
  kernel_args.buffer(*args.a.buffer).value(cl_int{args.a.offset}).value(cl_int{args.a.ld}).value(cl_int{args.a.batch_stride});
  kernel_args.buffer(*args.b.buffer).value(cl_int{args.b.offset}).value(cl_int{args.b.ld}).value(cl_int{args.b.batch_stride});
  kernel_args.value(cl_int{args.b_batch_group});
  kernel_args.buffer(*args.c.buffer).value(cl_int{args.c.offset}).value(cl_int{args.c.ld}).value(cl_int{args.c.batch_stride});
  kernel_args.value(cl_float{args.alpha});
  kernel_args.buffer(residual).value(cl_int{args.residual != nullptr ? 1 : 0});
  const auto t = static_cast<std::size_t>(tile);
  return session.launch(kernel,
                        LaunchGeometry::grid({round_up(static_cast<std::size_t>(args.n), t),
                                              round_up(static_cast<std::size_t>(args.m), t),
                                              static_cast<std::size_t>(args.batches)},
                                             {t, t, 1}),
                        kernel_args);
}

void
reference_gemm(const GemmArgs& args, const float* a, const float* b, float* c, const float* residual)
{
  for (int z = 0; z < args.batches; ++z) {
    const float* az = a + args.a.offset + z * args.a.batch_stride;
    const float* bz = b + args.b.offset + (z / args.b_batch_group) * args.b.batch_stride;
    for (int row = 0; row < args.m; ++row) {
      for (int col = 0; col < args.n; ++col) {
        double acc = 0;
        for (int kk = 0; kk < args.k; ++kk) {
          const float bv = args.b_layout == BLayout::transposed ? bz[col * args.b.ld + kk] : bz[kk * args.b.ld + col];
          acc += static_cast<double>(az[row * args.a.ld + kk]) * bv;
        }
        const int index = args.c.offset + z * args.c.batch_stride + row * args.c.ld + col;
        double value = args.alpha * acc;
        if (residual != nullptr) {
          value += residual[index];
        }
        c[index] = static_cast<float>(value);
      }
    }
  }
}

} // namespace prewarm::engine
