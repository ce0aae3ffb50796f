# SPDX-License-Identifier: Apache-2.0
"""bench/run's command line."""
import argparse
import datetime
import shutil
import sys
import tempfile
import time
from pathlib import Path

from . import machine
from .cases import ALL_CASES
from .context import Context
from .plots import draw_plots
from .report import write_markdown
from .results import write_results
from .runner import run_cases


def parse(doc, argv):
    repo = Path(__file__).resolve().parents[3]
    p = argparse.ArgumentParser(prog="bench/run", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smoke run: one round of the smallest variants")
    size.add_argument("--full", action="store_true", help="published figures (the default)")
    p.add_argument("--build", default=str(repo / "build"), help="build directory (default: build)")
    p.add_argument("--out", help="results directory (default: bench/results, or a temporary one with --quick)")
    p.add_argument("--only", default="", help="comma-separated case names (default: every case)")
    p.add_argument("--variants", default="", help="regular expression: only the variants it matches (search)")
    p.add_argument("--runs", type=int, default=0, help="rounds per case (default: the case's own)")
    p.add_argument("--budget", type=float, default=0, help="seconds: start no new round after this (0 = none)")
    p.add_argument("--work", help="scratch directory (default: a new one under /var/tmp, removed at the end)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    args = p.parse_args(argv)
    args.repo = repo
    return args


def main(doc, argv=None):
    args = parse(doc, sys.argv[1:] if argv is None else argv)
    if args.list:
        for case in ALL_CASES:
            print(f"{case.name:18s} {case.title}")
        return 0
    wanted = [n for n in args.only.split(",") if n]
    unknown = [n for n in wanted if n not in {c.name for c in ALL_CASES}]
    if unknown:
        print(f"bench/run: error: unknown case {', '.join(unknown)} (bench/run --list)", file=sys.stderr)
        return 2
    cases = [c for c in ALL_CASES if not wanted or c.name in wanted]
    out = Path(args.out) if args.out else (None if args.quick else args.repo / "bench/results")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="prewarm-bench.", dir="/var/tmp"))
    if out is None:
        out = work / "results"
    out.mkdir(parents=True, exist_ok=True)

    def log(message):
        print(f"bench: {message}", file=sys.stderr, flush=True)

    ctx = Context(args.repo, args.build, work, args.quick, args.runs, args.budget, log, args.variants)
    missing = ctx.missing_binaries()
    if missing:
        print(f"bench/run: error: {missing}", file=sys.stderr)
        return 2
    started_at = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    start = time.monotonic()
    try:
        info = machine.describe(args.repo, {"prewarm": ctx.prewarm, "prewarm-runtime": ctx.runtime})
        results, goals = run_cases(ctx, cases, args.runs, args.budget)
    finally:
        if not args.work:  # scratch goes; the results stay (with --quick they live in it)
            for child in work.iterdir():
                if child != out:
                    shutil.rmtree(child, ignore_errors=True)
    document = {
        "schema_version": 1,
        "quick": args.quick,
        "started_at": started_at.isoformat().replace("+00:00", "Z"),
        "seconds": round(time.monotonic() - start, 1),
        "argv": ["bench/run", *(sys.argv[1:] if argv is None else argv)],
        "machine": info,
        "cases": [r.to_json() for r in results],
        "goals": [g.to_json() for g in goals],
    }
    write_results(out / "results.json", document)
    plots = draw_plots(out, results, log)
    write_markdown(out / "results.md", document, plots)
    if not args.work and out.parent != work:
        shutil.rmtree(work, ignore_errors=True)
    failed = [r.name for r in results if r.status == "failed"]
    log(f"results: {out / 'results.json'}, {out / 'results.md'}; {len(plots)} plots"
        + (f"; failed cases: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
