# SPDX-License-Identifier: Apache-2.0
"""One PNG per case: the median of its primary metric per variant and mode,
with min-max whiskers; a log axis where the values span more than 20x."""
import statistics


def draw_plots(out, results, log):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no matplotlib in this python (Debian: python3-matplotlib): no plots")
        return []
    written = []
    for result in results:
        if not result.samples:
            continue
        variants, modes = result.variants(), result.present_modes()
        fig, ax = plt.subplots(figsize=(max(6.5, 1.3 * len(variants) * max(1, len(modes)) / 2), 4.2))
        width = 0.8 / len(modes)
        everything = []
        for j, mode in enumerate(modes):
            meds, lows, highs, xs = [], [], [], []
            for i, variant in enumerate(variants):
                v = result.values(variant, mode)
                if not v:
                    continue
                m = statistics.median(v)
                everything += v
                meds.append(m)
                lows.append(m - min(v))
                highs.append(max(v) - m)
                xs.append(i + (j - (len(modes) - 1) / 2) * width)
            if xs:
                ax.bar(xs, meds, width=width, yerr=[lows, highs], capsize=3, label=mode)
        ax.set_xticks(range(len(variants)))
        ax.set_xticklabels([v.replace(" ", "\n") for v in variants], fontsize=8)
        positive = [v for v in everything if v > 0]
        if positive and max(positive) / min(positive) > 20:
            ax.set_yscale("log")
        ax.set_ylabel(f"{result.primary} ({result.unit}); median, min-max")
        ax.set_title(result.title, fontsize=10)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / f"{result.name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path.name)
    return written
