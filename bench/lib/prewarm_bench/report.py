# SPDX-License-Identifier: Apache-2.0
"""results.md: the machine, the goals met or not, and per case the medians
(min-max) of every metric and the ratios of medians."""


def _fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.3g}"
    return f"{x:.3g}"


def write_markdown(path, doc, plots):
    m = doc["machine"]
    lines = [
        f"# prewarm benchmarks{' (quick smoke run: not for publishing)' if doc['quick'] else ''}",
        "",
        f"Taken {doc['started_at']} at commit `{m.get('commit', '?')[:12]}`{' (with local changes)' if m.get('commit_dirty') else ''}"
        f" in {doc['seconds'] / 60:.1f} min by `{' '.join(doc['argv'])}`.",
        f"Machine: {m.get('host')}, {m.get('os')}, {m.get('cpus')} x {m.get('cpu')}, {m.get('memory_gib')} GiB,"
        f" load average {m['load_average'][0]:.2f} at the start.",
    ]
    if m.get("opencl_devices"):
        lines.append("OpenCL: " + "; ".join(m["opencl_devices"]) + ".")
    if m.get("nvidia", {}).get("gpus"):
        lines.append("NVIDIA: " + "; ".join(m["nvidia"]["gpus"]) + ".")
    versions = ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items())
    lines += [f"Versions: {versions}.", "",
              "Every sample is a fresh process; modes alternate within each round. Medians with (min-max);"
              " ratios are ratios of medians taken side by side in this run.", "", "## Goals", "",
              "| goal | target | measured | met |", "|---|---|---|---|"]
    for g in doc["goals"]:
        measured = "; ".join(f"{v['variant']}: {_fmt(v['value'])}" for v in g["values"]) or "-"
        met = {True: "yes", False: "**no**", None: "not measured"}[g["met"]]
        lines.append(f"| {g['goal']} | {g['target']} | {measured} | {met}{' (' + g['why'] + ')' if g['why'] else ''} |")
    for case in doc["cases"]:
        lines += ["", f"## {case['name']}: {case['title']}", ""]
        if case["status"] != "ran":
            lines.append(f"{case['status']}: {case['reason']}")
            continue
        lines += [f"- {n}" for n in case["notes"]]
        if f"{case['name']}.png" in plots:
            lines += ["", f"![{case['name']}]({case['name']}.png)"]
        lines += ["", "| variant | mode | metric | n | median | min | max |", "|---|---|---|---|---|---|---|"]
        for row in case["summary"]:
            lines.append(f"| {row['variant']} | {row['mode']} | {row['metric']} | {row['n']} | {_fmt(row['median'])} |"
                         f" {_fmt(row['min'])} | {_fmt(row['max'])} |")
        if case["ratios"]:
            lines += ["", "| variant | ratio | of | value |", "|---|---|---|---|"]
            for r in case["ratios"]:
                lines.append(f"| {r['variant']} | {r['name']} | {r['metric']} | {_fmt(r['value'])}x |")
        for f in case["failures"]:
            first = f["error"].splitlines()[0] if f["error"] else ""
            lines.append(f"\nfailed: {f['variant']} {f['mode']}: {first}")
    path.write_text("\n".join(lines) + "\n")
