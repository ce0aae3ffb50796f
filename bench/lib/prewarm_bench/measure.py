# SPDX-License-Identifier: Apache-2.0
"""One command in a fresh process: wall time, exit status, peak memory.

Google Benchmark repeats a function inside one process, which is exactly what
hides a cold start; every sample here is a new process. Peak memory is the
largest resident set in the command's process tree (Linux folds every
waited-for descendant into a child's rusage: a builder's jobs count; so does
the program that `prewarm-runtime exec` replaces itself with). It is read by
GNU time (Debian: time), which forks the command itself: a child forked from
this Python process would carry Python's own resident set into its peak at
exec (exec_mmap folds the old mm's high-water mark), hiding small peaks."""
import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass


class BenchError(Exception):
    """A sample or a preparation step failed: the case stops, the run goes on."""


@dataclass
class Run:
    argv: list
    seconds: float
    returncode: int
    max_rss_mib: float
    stdout: str
    stderr: str

    def check(self):
        """This run, or a BenchError naming the command with its stderr tail."""
        if self.returncode != 0:
            tail = "\n".join(self.stderr.strip().splitlines()[-15:])
            raise BenchError(f"{' '.join(self.argv)} exited {self.returncode}:\n{tail}")
        return self


# Variables that point a program at a cache: a sample sets exactly the ones its
# mode needs, nothing leaks in from the caller's shell.
CACHE_VARIABLE_PREFIXES = ("POCL_CACHE_DIR", "CUDA_CACHE_", "PREWARM_", "TRITON_CACHE_DIR", "TORCHINDUCTOR_",
                           "NEO_CACHE_", "SYCL_CACHE_", "OPENCL_LAYERS", "XDG_CACHE_HOME", "PYOPENCL_",
                           "TORCH_CACHING_PRECOMPILE")


def clean_environment(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(CACHE_VARIABLE_PREFIXES)}
    env.update({k: str(v) for k, v in (extra or {}).items()})
    return env


GNU_TIME = os.environ.get("PREWARM_BENCH_GNU_TIME", "/usr/bin/time")


def run_fresh(argv, env=None, cwd=None, timeout=3600):
    argv = [str(a) for a in argv]
    peak_file = None
    launch = argv
    if os.access(GNU_TIME, os.X_OK):
        fd, peak_file = tempfile.mkstemp(prefix="prewarm-bench-peak.")
        os.close(fd)
        launch = [GNU_TIME, "-f", "%M", "-o", peak_file, *argv]
    start = time.perf_counter()
    proc = subprocess.Popen(launch, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    chunks = {"out": [], "err": []}
    readers = [threading.Thread(target=lambda s=s, k=k: chunks[k].append(s.read()), daemon=True)
               for s, k in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for r in readers:
        r.start()
    timed_out = threading.Event()

    def kill():
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    # wait4 on this pid alone: its rusage is this child's, not every child's.
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join()
    err = "".join(chunks["err"]) + (f"\n(killed after {timeout} s)" if timed_out.is_set() else "")
    peak_kib = usage.ru_maxrss
    if peak_file:
        try:
            # "Command exited with non-zero status N" may come first; %M is last.
            peak_kib = int(open(peak_file).read().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
        os.unlink(peak_file)
    return Run(argv, seconds, proc.returncode, peak_kib / 1024.0, "".join(chunks["out"]), err)
