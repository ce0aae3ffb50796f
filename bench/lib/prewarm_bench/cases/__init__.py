# SPDX-License-Identifier: Apache-2.0
"""Every case, in the order bench/run runs them (cheap and independent first)."""
from .apps import Apps
from .build_time import BuildTime
from .bundle_size import BundleSize
from .first_result import FirstResult
from .install_throughput import InstallThroughput
from .intel_virtual import IntelVirtual
from .peak_memory import PeakMemory
from .registry import RegistryInstall
from .runtime_overhead import RuntimeOverhead
from .runtime_startup import RuntimeStartup
from .third_party import ThirdParty
from .torch_compile import TorchCompile
from .torch_compile_cpu import TorchCompileCpu

ALL_CASES = [
    FirstResult(),
    ThirdParty(),
    Apps(),
    RuntimeOverhead(),
    RuntimeStartup(),
    InstallThroughput(),
    BuildTime(),
    BundleSize(),
    PeakMemory(),
    RegistryInstall(),
    IntelVirtual(),
    TorchCompile(),
    TorchCompileCpu(),
]
