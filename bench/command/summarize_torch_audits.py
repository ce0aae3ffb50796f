#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the caches said in a bench/command/gpu_torch_dynamo.sh run: per build,
its hit proof per kind; per bundle sample (`exec --audit`), its audit per kind;
and, where both exist, the Triton entries the proof read that an audited start
did not (or the other way round), by kernel name.

  summarize_torch_audits.py OUT/logs"""
import glob
import json
import os
import sys


def counts(kinds):
    return "; ".join(f"{k['kind']}: {k['reused_files']} reused, {k['new_files']} new"
                     + (f" ({k['rewritten_files']} rewritten)" if k.get("rewritten_files") else "") for k in kinds)


def entries(kinds, kind, field="reused_entries"):
    for k in kinds:
        if k["kind"] == kind:
            return {e["entry"]: ",".join(e.get("kernels", [])) or e.get("name", "") for e in k[field]}
    return {}


def main(logs):
    proofs = {}
    for path in sorted(glob.glob(os.path.join(logs, "build-*.json"))):
        report = json.load(open(path))
        for job in report.get("jobs", []):
            proof = (job.get("report") or {}).get("hit_proof")
            if proof:
                proofs[os.path.basename(path)] = proof
                print(f"- proof {os.path.basename(path)} ({job['id']}): {counts(proof['kinds'])}")
                for cause in proof.get("causes", []):
                    print(f"  - cause: {cause[:400]}")
    audits = sorted(glob.glob(os.path.join(logs, "*.audit.json")))
    for path in audits:
        audit = json.load(open(path))
        run = audit.get("this_run", audit)
        print(f"- audit {os.path.basename(path)}: {counts(run['kinds'])}")
    for name, proof in proofs.items():
        for path in audits[:1]:
            run = json.load(open(path)).get("this_run")
            if not run:
                continue
            for kind in ("triton", "dynamo"):
                a, b = entries(proof["kinds"], kind), entries(run["kinds"], kind)
                only_proof = sorted(set(a) - set(b))
                only_audit = sorted(set(b) - set(a))
                print(f"- {kind} entries read by the proof of {name} and not by {os.path.basename(path)}:"
                      f" {len(only_proof)}: {[a[e] or e for e in only_proof][:12]}")
                print(f"- {kind} entries read by {os.path.basename(path)} and not by the proof: {len(only_audit)}:"
                      f" {[b[e] or e for e in only_audit][:12]}")


if __name__ == "__main__":
    main(sys.argv[1])
