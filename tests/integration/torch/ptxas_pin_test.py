# SPDX-License-Identifier: Apache-2.0
"""The dynamo kind's capture hook (prewarm/command/precompile_hook.py) makes a
program's own Triton compiles key their kernels as torch's compile workers
do, with real torch and Triton on the CPU (Triton compiles for an explicit
target, sm_90, without a GPU).

Triton keys a kernel with the version of the ptxas that compiles it. A
worker sets TRITON_PTXAS_PATH to torch's bundled ptxas
(torch._inductor.runtime.compile_tasks._set_triton_ptxas_path(), called as
_worker_compile_triton and torch's in-process compile do); the program's own
process, whose compiles (coordinate descent, autotuning) are not handed to
workers, uses Triton's bundled ptxas unless something sets it. The same
kernel compiled in a child that stands for each:

  worker        torch's own rule applied, then compiled
  app           the program's process at a capture without the pin
  app+hook      the same under the capture hook (sitecustomize)

app+hook must get the worker's key (fails without TritonPtxasPin); app gets
another key wherever torch's and Triton's ptxas differ in version (torch
2.11+cu130: 13.0 against 12.8; the check is skipped where they agree).

  PYTHON ptxas_pin_test.py     exit 0 pass, 1 fail, 77 skip"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK = os.path.join(HERE, "..", "..", "..", "prewarm", "command", "precompile_hook.py")

KERNEL = r'''
import json, os, sys
import torch
if sys.argv[1] == "worker":
    from torch._inductor.runtime.compile_tasks import _set_triton_ptxas_path
    _set_triton_ptxas_path()
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def add(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(x + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

src = ASTSource(fn=add, signature={"x": "*fp32", "y": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                constexprs={"BLOCK": 128})
kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
version = next(l for l in kernel.asm["ptx"].splitlines() if l.startswith(".version"))
print(json.dumps({"hash": kernel.hash, "ptxas": os.environ.get("TRITON_PTXAS_PATH"), "ptx": version}))
'''


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def compile_in_child(role, tmp, hook_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_PTXAS_PATH", "PYTHONPATH")}
    env["TRITON_CACHE_DIR"] = os.path.join(tmp, f"triton-{role}")  # each child compiles, none reads another's
    if hook_dir:
        env["PYTHONPATH"] = hook_dir
    script = os.path.join(tmp, "kernel.py")  # @triton.jit reads its source from a file
    with open(script, "w") as f:
        f.write(KERNEL)
    done = subprocess.run([sys.executable, script, role], env=env, capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        print(f"FAIL: the {role} child failed ({done.returncode}):\n{done.stderr[-3000:]}")
        sys.exit(1)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as error:
        skip(f"no torch or Triton in {sys.executable}: {error}")
    torch_ptxas = os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "bin", "ptxas")
    if not os.access(torch_ptxas, os.X_OK):
        skip(f"this torch bundles no ptxas ({torch_ptxas}): nothing to pin")
    with tempfile.TemporaryDirectory() as tmp:
        hook_dir = os.path.join(tmp, "hook")
        os.makedirs(hook_dir)
        shutil.copy(HOOK, os.path.join(hook_dir, "sitecustomize.py"))
        worker = compile_in_child("worker", tmp, None)
        app = compile_in_child("app", tmp, None)
        pinned = compile_in_child("app+hook", tmp, hook_dir)
    for role, result in (("worker", worker), ("app", app), ("app+hook", pinned)):
        print(f"{role:9} key {result['hash'][:16]}  {result['ptx']}  TRITON_PTXAS_PATH={result['ptxas']}")
    failures = []
    if pinned["ptxas"] != torch_ptxas:
        failures.append(f"the hook set TRITON_PTXAS_PATH={pinned['ptxas']}, not torch's {torch_ptxas}")
    if pinned["hash"] != worker["hash"]:
        failures.append("under the hook the program's compile got another key than the worker's")
    if app["ptx"] != worker["ptx"]:
        if app["hash"] == worker["hash"]:
            failures.append("two ptxas versions gave one key: the case this test stands on is gone")
    else:
        print("note: Triton's and torch's ptxas give the same PTX version here; the unpinned case is not shown")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print("PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
