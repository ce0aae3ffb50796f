# SPDX-License-Identifier: Apache-2.0
# A SYCL application's warm-up, as a user would write it, with dpctl (PyPI) on
# Intel's SYCL runtime: one program built from SPIR-V (Level Zero module
# creation through the driver) and one kernel of a SYCL device image that the
# SYCL runtime JIT-compiles (dpctl's own fill kernel for 32-bit patterns),
# then it waits for the result. On a virtual Intel device nothing executes:
# the result is garbage or the wait never returns; the builder's deadline
# bounds it and keeps what was compiled.
import ctypes
import os
import sys

import dpctl
import dpctl.memory
import dpctl.program

queue = dpctl.SyclQueue(sys.argv[1] if len(sys.argv) > 1 else "level_zero:gpu")
device = queue.sycl_device
print(f"device: {device.name} driver {device.driver_version} ({device.backend})", flush=True)
here = os.path.dirname(dpctl.__file__)
with open(os.path.join(here, "tests", "input_files", "multi_kernel.spv"), "rb") as f:
    program = dpctl.program.create_program_from_spirv(queue, f.read())
print("program from SPIR-V: kernel add", program.has_sycl_kernel("add"), flush=True)
memory = dpctl.memory.MemoryUSMDevice(4096, queue=queue)
library = ctypes.CDLL(os.path.join(here, "libDPCTLSyclInterface.so"))
library.DPCTLQueue_Fill32.restype = ctypes.c_void_p
library.DPCTLQueue_Fill32.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_size_t]
if not library.DPCTLQueue_Fill32(queue.addressof_ref(), memory._pointer, 7, 1024):
    sys.exit("fill: not submitted")
print("fill submitted", flush=True)
result = bytearray(4096)
memory.copy_to_host(result)
print("result:", result[:8].hex(), "(meaningless on a virtual device)", flush=True)
