"""Summarise ``run_isaaclab_ppo.sh``'s JSON lines: per (num_envs, separate) and entry, the median env-steps/s and
the median per-seed ratio of skrl_like to each other entry (ratios, not absolutes: the machine may be loaded).

    .venv/bin/python benchmarks/summarize_isaaclab.py benchmarks/results/isaaclab-ppo-*.jsonl
"""

import json
import statistics
import sys
from collections import defaultdict


def entry(line: dict) -> str:
    return line["library"] if line["library"] != "skrl" else f"skrl {line['version']}"


def main() -> None:
    runs = defaultdict(dict)  # (num_envs, separate) -> {(entry, seed): steps/s}
    for path in sys.argv[1:]:
        with open(path) as file:
            for text in file:
                if text.strip().startswith("{"):
                    line = json.loads(text)
                    runs[(line["num_envs"], line["separate"])][(entry(line), line["seed"])] = line[
                        "env_steps_per_second"
                    ]
    for (num_envs, separate), values in sorted(runs.items()):
        print(f"num_envs={num_envs} separate={separate}")
        names = sorted({name for name, _ in values})
        for name in names:
            seeds = {seed: v for (n, seed), v in values.items() if n == name}
            ratio = ""
            if name != "skrl_like":
                ratios = [values[("skrl_like", s)] / v for s, v in seeds.items() if ("skrl_like", s) in values]
                ratio = (
                    f"  skrl_like / this: median {statistics.median(ratios):.2f}x over {len(ratios)}" if ratios else ""
                )
            print(
                f"  {name:16s} median {statistics.median(seeds.values()):>8.0f} env-steps/s ({len(seeds)} runs){ratio}"
            )


if __name__ == "__main__":
    main()
