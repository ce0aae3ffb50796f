# Builds SPIR-V modules through Level Zero on the first GPU (the Intel root's
# NEO on a virtual device): the Level Zero half of the recording that
# neo_synthesis_test.sh checks synthesis against. Runs under the root's
# python3 (ctypes only). Nothing executes.
# Usage: ze_build.py SPV [BUILD_FLAGS [SPEC_ID=VALUE,...]]...  (one module per SPV argument group)
# stdout: "device\t<name>\t0x<id>", then "built\t<spv>" or "failed\t<spv>\t<status>"
import ctypes
import sys

ze = ctypes.CDLL("libze_loader.so.1")
P = ctypes.c_void_p


def check(what, status):
    if status != 0:
        print(f"ze_build: error: {what} returned 0x{status:x}", file=sys.stderr)
        sys.exit(2)


class DeviceProperties(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", P), ("type", ctypes.c_uint32), ("vendorId", ctypes.c_uint32),
                ("deviceId", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("subdeviceId", ctypes.c_uint32),
                ("coreClockRate", ctypes.c_uint32), ("maxMemAllocSize", ctypes.c_uint64),
                ("maxHardwareContexts", ctypes.c_uint32), ("maxCommandQueuePriority", ctypes.c_uint32),
                ("numThreadsPerEU", ctypes.c_uint32), ("physicalEUSimdWidth", ctypes.c_uint32),
                ("numEUsPerSubslice", ctypes.c_uint32), ("numSubslicesPerSlice", ctypes.c_uint32),
                ("numSlices", ctypes.c_uint32), ("timerResolution", ctypes.c_uint64),
                ("timestampValidBits", ctypes.c_uint32), ("kernelTimestampValidBits", ctypes.c_uint32),
                ("uuid", ctypes.c_uint8 * 16), ("name", ctypes.c_char * 256)]


class ContextDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", P), ("flags", ctypes.c_uint32)]


class SpecConstants(ctypes.Structure):
    _fields_ = [("numConstants", ctypes.c_uint32), ("pConstantIds", P), ("pConstantValues", P)]


class ModuleDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", P), ("format", ctypes.c_uint32), ("inputSize", ctypes.c_size_t),
                ("pInputModule", ctypes.c_char_p), ("pBuildFlags", ctypes.c_char_p),
                ("pConstants", ctypes.POINTER(SpecConstants))]


check("zeInit", ze.zeInit(0))
count = ctypes.c_uint32(0)
check("zeDriverGet", ze.zeDriverGet(ctypes.byref(count), None))
drivers = (P * count.value)()
check("zeDriverGet", ze.zeDriverGet(ctypes.byref(count), drivers))
driver = P(drivers[0])
count = ctypes.c_uint32(0)
check("zeDeviceGet", ze.zeDeviceGet(driver, ctypes.byref(count), None))
devices = (P * count.value)()
check("zeDeviceGet", ze.zeDeviceGet(driver, ctypes.byref(count), devices))
device = P(devices[0])
properties = DeviceProperties(stype=0x3)
check("zeDeviceGetProperties", ze.zeDeviceGetProperties(device, ctypes.byref(properties)))
print(f"device\t{properties.name.decode()}\t0x{properties.deviceId:04x}", flush=True)
context = P()
check("zeContextCreate", ze.zeContextCreate(driver, ctypes.byref(ContextDesc(stype=0xd)), ctypes.byref(context)))

failures = 0
arguments = sys.argv[1:]
while arguments:
    spv_path = arguments.pop(0)
    flags = arguments.pop(0) if arguments else ""
    specs = arguments.pop(0) if arguments else ""
    pairs = [s.split("=") for s in specs.split(",") if s]
    ids = (ctypes.c_uint32 * max(len(pairs), 1))(*[int(i) for i, _ in pairs])
    values = [ctypes.c_uint32(int(v)) for _, v in pairs]
    value_pointers = (P * max(len(pairs), 1))(*[ctypes.addressof(v) for v in values])
    constants = SpecConstants(len(pairs), ctypes.cast(ids, P), ctypes.cast(value_pointers, P))
    spv = open(spv_path, "rb").read()
    desc = ModuleDesc(stype=0x1b, format=0, inputSize=len(spv), pInputModule=spv, pBuildFlags=flags.encode(),
                      pConstants=ctypes.pointer(constants))
    module = P()
    status = ze.zeModuleCreate(context, device, ctypes.byref(desc), ctypes.byref(module), None)
    if status == 0:
        print(f"built\t{spv_path}", flush=True)
        ze.zeModuleDestroy(module)
    else:
        failures += 1
        print(f"failed\t{spv_path}\t0x{status:x}", flush=True)
sys.exit(1 if failures else 0)
