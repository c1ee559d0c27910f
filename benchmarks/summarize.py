"""Summarize benchmark JSON lines (from run_all.sh) as a Markdown table of medians.

    python3 benchmarks/summarize.py benchmarks/results/cartpole-ppo-*.jsonl

Groups by (config, library, backend); reports the number of runs and the median of env_steps_per_s,
seconds and final_eval_return, plus each entry's speed relative to the minimal collection loop of the
same config. Standard library only.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _fmt(value, digits=1):
    return "n/a" if value is None else f"{value:,.{digits}f}"


def main(paths: list[str]) -> None:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    groups[(r["config"], r["library"], r["backend"])].append(r)

    print(
        "| config | library | backend | runs | env steps | median env_steps/s | median seconds "
        "| median eval return | vs minimal loop |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(groups):
        config, library, backend = key
        runs = groups[key]
        sps = _median([r["env_steps_per_s"] for r in runs])
        base = _median([r["env_steps_per_s"] for r in groups.get((config, "minimal-loop", "torch"), [])])
        rel = f"{sps / base:.2f}x" if sps and base else "n/a"
        steps = sorted({r["timesteps"] for r in runs})
        print(
            f"| {config} | {library} | {backend} | {len(runs)} | {'/'.join(map(str, steps))} | {_fmt(sps)} "
            f"| {_fmt(_median([r['seconds'] for r in runs]), 2)} "
            f"| {_fmt(_median([r['final_eval_return'] for r in runs]))} | {rel} |"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
