# SPDX-License-Identifier: Apache-2.0
"""What a figure was taken on: host, CPUs, memory, load, OS, OpenCL devices,
NVIDIA GPU and driver, tool versions, the commit."""
import os
import platform
import shutil
import subprocess


def _out(argv, timeout=60):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.stdout.strip() if p.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _meminfo_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    return None


def _os_release():
    try:
        with open("/etc/os-release") as f:
            fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        return fields.get("PRETTY_NAME", "").strip('"')
    except OSError:
        return ""


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def describe(repo, tools):
    """tools: {"prewarm": path, "prewarm-runtime": path}."""
    info = {
        "host": platform.node(),
        "os": _os_release(),
        "kernel": platform.release(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gib": _meminfo_gib(),
        "load_average": list(os.getloadavg()),
        "commit": _out(["git", "-C", str(repo), "rev-parse", "HEAD"]),
        "commit_dirty": bool(_out(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"])),
        "python": platform.python_version(),
        "versions": {},
        "opencl_devices": [],
        "nvidia": {},
    }
    for name, path in tools.items():
        info["versions"][name] = _out([str(path), "--version"]) or "?"
    for pkg in ("pocl-opencl-icd", "ocl-icd-libopencl1", "intel-opencl-icd", "clpeak", "hashcat", "libclblast1",
                "python3-pyopencl", "ffmpeg", "python3-opencv", "clfft-client", "darktable", "docker-registry", "zstd", "tar"):
        v = _out(["dpkg-query", "-W", "-f=${Version}", pkg])
        if v:
            info["versions"][pkg] = v
    if shutil.which("clinfo"):
        listing = _out(["clinfo", "-l"])
        info["opencl_devices"] = [line.strip() for line in listing.splitlines() if "Device" in line]
    if shutil.which("nvidia-smi"):
        gpu = _out(["nvidia-smi", "--query-gpu=name,driver_version,pci.device_id,compute_cap", "--format=csv,noheader"])
        info["nvidia"] = {"gpus": [g.strip() for g in gpu.splitlines() if g.strip()]}
        torch = _out(["python3", "-c", "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"])
        if torch:
            t, cuda, triton = torch.split()
            info["versions"].update({"torch": t, "cuda": cuda, "triton": triton})
    return info
