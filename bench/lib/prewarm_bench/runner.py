# SPDX-License-Identifier: Apache-2.0
"""Runs cases: prepare every variant, then rounds of interleaved samples."""
import re
import time
import traceback

from .measure import BenchError
from .results import CaseResult


def run_case(ctx, case, rounds, deadline):
    result = CaseResult(case.name, case.title, case.primary, case.unit, list(case.modes),
                        ratio_specs=list(case.ratios))
    reason = case.unavailable(ctx)
    if reason:
        result.status, result.reason = "skipped", reason
        ctx.log(f"{case.name}: skipped: {reason}")
        return result
    result.notes = case.notes(ctx)
    variants = []
    for variant in case.variants(ctx):
        if ctx.variant_filter and not re.search(ctx.variant_filter, variant):
            continue
        ctx.log(f"{case.name}: preparing {variant}")
        try:
            case.prepare(ctx, variant)
            variants.append(variant)
        except BenchError as e:
            result.failures.append({"variant": variant, "mode": "prepare", "error": str(e)})
            ctx.log(f"{case.name}: {variant}: preparation failed: {e}")
    for round_ in range(rounds):
        if round_ > 0 and time.monotonic() > deadline:
            result.notes.append(f"budget spent: {round_} of {rounds} rounds taken")
            break
        for variant in variants:
            modes = list(case.modes)
            order = modes[round_ % len(modes):] + modes[:round_ % len(modes)]
            for mode in order:
                if any(f["variant"] == variant and f["mode"] == mode for f in result.failures):
                    continue
                try:
                    metrics = case.sample(ctx, variant, mode, round_)
                except BenchError as e:
                    result.failures.append({"variant": variant, "mode": mode, "error": str(e)})
                    ctx.log(f"{case.name}: {variant} {mode}: {e}")
                    continue
                if metrics is None:  # the mode does not apply to this variant
                    continue
                result.add(variant, mode, round_, metrics)
                shown = metrics.get(case.primary)
                ctx.log(f"{case.name}: {variant} {mode} round {round_}: "
                        f"{case.primary} {shown:.4g} {case.unit}" if shown is not None else
                        f"{case.name}: {variant} {mode} round {round_}: {metrics}")
    if not result.samples:
        result.status = "failed" if result.failures else "skipped"
        result.reason = result.reason or ("every sample failed" if result.failures else "no variant applies")
    return result


def run_cases(ctx, cases, rounds_override, budget):
    started = time.monotonic()
    results, goals = [], []
    for case in cases:
        rounds = rounds_override or (case.rounds_quick if ctx.quick else case.rounds_full)
        deadline = started + budget if budget else float("inf")
        try:
            result = run_case(ctx, case, rounds, deadline)
        except Exception:  # a bug in one case must not lose the others' samples
            result = CaseResult(case.name, case.title, case.primary, case.unit, list(case.modes),
                                status="failed", reason=traceback.format_exc(limit=4))
            ctx.log(f"{case.name}: crashed:\n{result.reason}")
        results.append(result)
        if result.samples:
            goals.extend(case.goals(result))
    return results, goals
