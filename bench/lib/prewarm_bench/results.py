# SPDX-License-Identifier: Apache-2.0
"""Samples, their statistics and the one results file.

Results file (results.json; schema_version 1):
  {"schema_version": 1, "quick": bool, "started_at": RFC3339, "seconds": S,
   "machine": {...} (machine.py), "argv": [...],
   "cases": [{"name", "title", "status": "ran"|"skipped"|"failed", "reason",
              "primary": METRIC, "unit", "modes": [...], "notes": [...],
              "samples": [{"variant", "mode", "round", "metrics": {NAME: NUMBER}}],
              "summary": [{"variant", "mode", "metric", "n", "median", "min", "max"}],
              "ratios": [{"variant", "name": "A/B", "metric", "value"}],
              "failures": [{"variant", "mode", "error"}]}],
   "goals": [{"goal", "case", "target", "values": [{"variant", "value"}], "met": true|false|null, "why"}]}
Every sample is kept; medians are quoted with their min and max."""
import json
import statistics
from dataclasses import dataclass, field


@dataclass
class Sample:
    variant: str
    mode: str
    round: int
    metrics: dict


@dataclass
class CaseResult:
    name: str
    title: str
    primary: str
    unit: str
    modes: list
    status: str = "ran"
    reason: str = ""
    notes: list = field(default_factory=list)
    samples: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    ratio_specs: list = field(default_factory=list)  # (name, numerator mode, denominator mode)

    def add(self, variant, mode, round_, metrics):
        self.samples.append(Sample(variant, mode, round_, metrics))

    def variants(self):
        return list(dict.fromkeys(s.variant for s in self.samples))

    def present_modes(self):
        return [m for m in self.modes if any(s.mode == m for s in self.samples)] + \
               [m for m in dict.fromkeys(s.mode for s in self.samples) if m not in self.modes]

    def values(self, variant, mode, metric=None):
        metric = metric or self.primary
        return [s.metrics[metric] for s in self.samples
                if s.variant == variant and s.mode == mode and metric in s.metrics]

    def median(self, variant, mode, metric=None):
        v = self.values(variant, mode, metric)
        return statistics.median(v) if v else None

    def ratio(self, variant, numerator, denominator, metric=None):
        a, b = self.median(variant, numerator, metric), self.median(variant, denominator, metric)
        return a / b if a is not None and b else None

    def summary(self):
        rows = []
        for variant in self.variants():
            for mode in self.present_modes():
                metrics = sorted({k for s in self.samples if s.variant == variant and s.mode == mode for k in s.metrics})
                for metric in metrics:
                    v = self.values(variant, mode, metric)
                    rows.append({"variant": variant, "mode": mode, "metric": metric, "n": len(v),
                                 "median": statistics.median(v), "min": min(v), "max": max(v)})
        return rows

    def ratios(self):
        out = []
        for variant in self.variants():
            for name, a, b in self.ratio_specs:
                value = self.ratio(variant, a, b)
                if value is not None:
                    out.append({"variant": variant, "name": name, "metric": self.primary, "value": value})
        return out

    def to_json(self):
        return {"name": self.name, "title": self.title, "status": self.status, "reason": self.reason,
                "primary": self.primary, "unit": self.unit, "modes": self.modes, "notes": self.notes,
                "samples": [{"variant": s.variant, "mode": s.mode, "round": s.round, "metrics": s.metrics}
                            for s in self.samples],
                "summary": self.summary(), "ratios": self.ratios(), "failures": self.failures}


@dataclass
class Goal:
    """A published target, checked against the medians of one case."""
    goal: str
    case: str
    target: str
    values: list  # [{"variant", "value"}]
    met: object   # True, False, or None when nothing was measured
    why: str = ""

    def to_json(self):
        return self.__dict__


def write_results(path, document):
    path.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n")
