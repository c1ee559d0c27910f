"""skrl 1.4.3's PendulumNoVel example scripts (issue 29) run on skrl_like, one JSON line per script.

    nice -n 10 .venv/bin/python benchmarks/skrl_rnn_scripts.py /work/.mirror/Toni-SM+skrl/repo \\
        --out benchmarks/results/s15-skrl-rnn-scripts.jsonl

The scripts are skrl's (never committed here): they are read from the skrl source given on the command line, a
checkout (files under ``docs/source/examples``) or a git directory (read at ``--ref``, by default the tag 1.4.3).
By default the 30 recurrent ones run (PPO, TRPO, SAC, TD3 and DDPG, each with a plain RNN, a GRU and an LSTM, the
gymnasium and the gym variants); ``--feedforward`` adds the 10 feedforward PendulumNoVel scripts beside them.

Two changes are made to each script, and no others:

- its import lines ``from skrl.<area>.<backend>[.<module>] import ...`` become skrl_like's backend-first paths
  ``from skrl_like.<backend>.<area>[.<module>] import ...`` (``from skrl.utils import ...``:
  ``from skrl_like.utils import ...``);
- its trainer's ``cfg_trainer = {"timesteps": N`` becomes the smoke length: ``--timesteps``, by default just past
  the script's first update (read from it: its ``cfg["rollouts"]``, 1024 for PPO and TRPO, or its
  ``cfg["learning_starts"]``, 1000 for SAC, TD3 and DDPG, plus ``--past-first-update`` steps, 8 by default).

Each script runs in its own subprocess (in a temporary directory, where it writes its ``runs/``) with a timeout. The
gym variants need the ``gym`` package (skrl_like's ``GymWrapper`` reads it; it is not a dependency): where it cannot
be imported they are reported as skipped, with the reason. ``--gym-path DIR`` puts a directory holding gym (e.g. from
``pip install --target DIR gym==0.26.2``) on their ``PYTHONPATH``. Printed line: ``script``, ``ok``, ``skipped``
(the reason, or null), ``seconds``, ``timesteps`` and ``error`` (the last line of a failed script's stderr).
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
from typing import Optional

EXAMPLES = "docs/source/examples"
FOLDERS = ("gymnasium", "gym")
AGENTS = ("ppo", "trpo", "sac", "td3", "ddpg")
CELLS = ("rnn", "gru", "lstm")
BACKENDS = ("torch", "jax")

_IMPORT = re.compile(r"^(\s*from\s+)skrl((?:\.\w+)*)(\s+import\b)", re.MULTILINE)
_FIRST_UPDATE = re.compile(r"^cfg\[\"(?:rollouts|learning_starts)\"\]\s*=\s*(\d+)", re.MULTILINE)
_TIMESTEPS = re.compile(r"^(cfg_trainer\s*=\s*\{\s*\"timesteps\"\s*:\s*)\d+", re.MULTILINE)


def skrl_like_module(skrl_module: str) -> str:
    """``skrl.agents.torch.ppo`` -> ``skrl_like.torch.agents.ppo``; a module without a backend part only changes its
    package (``skrl.utils`` -> ``skrl_like.utils``)."""
    parts = skrl_module.split(".")[1:]
    backends = [index for index, part in enumerate(parts) if part in BACKENDS]
    if not backends:
        return ".".join(["skrl_like", *parts])
    index = backends[0]
    return ".".join(["skrl_like", parts[index], *parts[:index], *parts[index + 1 :]])


def rewrite(source: str, timesteps: int) -> str:
    """The script with its import lines moved to skrl_like and its trainer's timesteps set (the only changes)."""
    rewritten = _IMPORT.sub(lambda m: m.group(1) + skrl_like_module("skrl" + m.group(2)) + m.group(3), source)
    rewritten, count = _TIMESTEPS.subn(lambda m: m.group(1) + str(timesteps), rewritten)
    if count != 1:
        raise ValueError(
            f"expected one 'cfg_trainer = {{\"timesteps\": N' line, found {count}: the script's trainer config has "
            "another form; shorten it by hand"
        )
    if re.search(r"^\s*(from|import)\s+skrl\b(?!_like)", rewritten, re.MULTILINE):
        raise ValueError("an import of skrl is left after the rewrite (not of the form 'from skrl.X import Y')")
    return rewritten


def smoke_timesteps(source: str, past_first_update: int) -> int:
    """The script's first update (its rollouts or learning_starts) plus ``past_first_update`` steps."""
    found = _FIRST_UPDATE.findall(source)
    if len(found) != 1:
        raise ValueError(
            f"expected one cfg['rollouts'] or cfg['learning_starts'] line, found {len(found)}: give --timesteps"
        )
    return int(found[0]) + past_first_update


def script_names(feedforward: bool) -> list:
    """``(folder, file name)`` of the PendulumNoVel scripts, the recurrent ones first."""
    names = []
    for folder in FOLDERS:
        for agent in AGENTS:
            cells = [f"_{cell}" for cell in CELLS] + ([""] if feedforward else [])
            names += [(folder, f"torch_{folder}_pendulumnovel_{agent}{cell}.py") for cell in cells]
    return names


def read_script(source: pathlib.Path, ref: str, folder: str, name: str) -> str:
    """A script from a checkout (its file) or a git directory (``git show ref:path``)."""
    relative = f"{EXAMPLES}/{folder}/{name}"
    if (source / relative).is_file():
        return (source / relative).read_text()
    return subprocess.run(
        ["git", "-C", str(source), "show", f"{ref}:{relative}"], check=True, capture_output=True, text=True
    ).stdout


def gym_missing(environment: dict) -> Optional[str]:
    """Why ``gym`` cannot be imported by the scripts' interpreter, or None."""
    probe = subprocess.run([sys.executable, "-c", "import gym"], capture_output=True, text=True, env=environment)
    if probe.returncode == 0:
        return None
    return f"gym is not importable ({probe.stderr.strip().splitlines()[-1]}); give --gym-path DIR"


def run_script(code: str, timeout: float, environment: dict) -> dict:
    """Run one rewritten script in a fresh directory; its result fields."""
    with tempfile.TemporaryDirectory(prefix="s15-skrl-script-") as directory:
        path = pathlib.Path(directory) / "script.py"
        path.write_text(code)
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, str(path)],
                cwd=directory,
                env=environment,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return {"ok": False, "seconds": round(time.perf_counter() - start, 1), "error": f"timeout {timeout} s"}
        seconds = round(time.perf_counter() - start, 1)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    error = None if done.returncode == 0 else (lines[-1] if lines else f"exit code {done.returncode}")
    return {"ok": done.returncode == 0, "seconds": seconds, "error": error}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("skrl", type=pathlib.Path, help="a skrl checkout, or a git directory of skrl's repository")
    parser.add_argument("--ref", default="1.4.3", help="the git revision to read from a git directory")
    parser.add_argument("--timesteps", type=int, default=None, help="the trainer's timesteps (default: see above)")
    parser.add_argument("--past-first-update", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per script")
    parser.add_argument("--only", nargs="*", default=[""], help="run the scripts whose name contains one of these")
    parser.add_argument("--feedforward", action="store_true", help="also the 10 feedforward PendulumNoVel scripts")
    parser.add_argument("--gym-path", default="", help="a directory holding the gym package, for the gym scripts")
    parser.add_argument("--out", default="", help="also append the JSON lines to this file")
    args = parser.parse_args()

    root = pathlib.Path(__file__).resolve().parents[1]
    environment = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), environment.get("PYTHONPATH", "")]))
    gym_environment = dict(environment)
    if args.gym_path:
        gym_environment["PYTHONPATH"] = os.pathsep.join([environment["PYTHONPATH"], args.gym_path])
    skip_gym = gym_missing(gym_environment)

    for folder, name in script_names(args.feedforward):
        if not any(part in name for part in args.only):
            continue
        source = read_script(args.skrl, args.ref, folder, name)
        timesteps = args.timesteps or smoke_timesteps(source, args.past_first_update)
        result = {"script": name, "ok": False, "skipped": None, "seconds": 0.0, "timesteps": timesteps}
        if folder == "gym" and skip_gym:
            result.update(skipped=skip_gym, error=None)
        else:
            code = rewrite(source, timesteps)
            result.update(run_script(code, args.timeout, gym_environment if folder == "gym" else environment))
        line = json.dumps(result)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as out:
                out.write(line + "\n")


if __name__ == "__main__":
    main()
