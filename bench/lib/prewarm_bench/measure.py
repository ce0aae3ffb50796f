# SPDX-License-Identifier: Apache-2.0
"""One command in a fresh process: wall time, exit status, peak memory.

Google Benchmark repeats a function inside one process, which is exactly what
hides a cold start; every sample here is a new process. Peak memory is the
largest resident set in the child's process tree from wait4(2) (Linux folds
every waited-for descendant into it, a builder's jobs too), which also covers
the program that exec() replaced it with (`prewarm-runtime exec` -> the
application)."""
import os
import signal
import subprocess
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
                           "NEO_CACHE_", "SYCL_CACHE_", "OPENCL_LAYERS", "XDG_CACHE_HOME", "PYOPENCL_")


def clean_environment(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(CACHE_VARIABLE_PREFIXES)}
    env.update({k: str(v) for k, v in (extra or {}).items()})
    return env


def run_fresh(argv, env=None, cwd=None, timeout=3600):
    argv = [str(a) for a in argv]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
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
    return Run(argv, seconds, proc.returncode, usage.ru_maxrss / 1024.0, "".join(chunks["out"]), err)
