"""skrl's PPO (1.4.3 or 2.x, whichever the venv holds) on the Isaac Lab-shaped benchmark of issue 28: the same
stand-in env (``skrl_like/envs/isaaclab_standin.py``, loaded by path: it needs torch and gymnasium only) wrapped by
skrl's own ``wrap_env(env, wrapper="isaaclab")`` (named: skrl's auto-detection looks for Isaac Lab's base classes),
trained by skrl's own Runner with the config of ``benchmarks/isaaclab_standin_ppo.py`` (Isaac Lab's Ant skrl YAML).
For skrl 2.x the keys it renamed are given their 2.x names (``lambda`` -> ``gae_lambda``, ``state_preprocessor`` ->
``observation_preprocessor``; ``clip_predicted_values`` dropped: 2.x clips whenever ``value_clip`` > 0), as its
Runner would map them with warnings, and the networks take ``OBSERVATIONS`` (2.x's ``STATES`` is the env's
privileged state, which the stand-in does not have).

    .bench_venv_skrl14/bin/python benchmarks/peers/skrl_isaaclab_ppo.py --num-envs 4096 --timesteps 64 --seed 0
    .bench_venv_skrl21/bin/python benchmarks/peers/skrl_isaaclab_ppo.py --num-envs 4096 --separate

Prints ONE JSON line in ``isaaclab_ant.report``'s layout (``library: "skrl"``, ``version``: skrl's).
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/
from isaaclab_ant import add_arguments, load_standin, report  # noqa: E402
from isaaclab_standin_ppo import config  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args()

    import skrl
    from skrl.envs.wrappers.torch import wrap_env
    from skrl.utils.runner.torch import Runner

    major = int(skrl.__version__.split(".")[0])
    env = wrap_env(load_standin()(num_envs=args.num_envs, device=args.device, seed=args.seed), wrapper="isaaclab")
    directory = tempfile.mkdtemp()
    cfg = config(args.timesteps, directory, args.seed, args.separate)
    if major >= 2:
        agent = cfg["agent"]
        agent["gae_lambda"] = agent.pop("lambda")
        agent["observation_preprocessor"] = agent.pop("state_preprocessor")
        agent["observation_preprocessor_kwargs"] = agent.pop("state_preprocessor_kwargs")
        for key in ("clip_predicted_values", "random_timesteps", "learning_starts"):
            del agent[key]
        for role in ("policy", "value"):
            for layer in cfg["models"][role]["network"]:
                layer["input"] = "OBSERVATIONS"
    runner = Runner(env, cfg)
    start = time.perf_counter()
    runner.run("train")
    seconds = time.perf_counter() - start
    writer = getattr(runner.agent, "writer", None)
    if writer is not None:
        writer.close()  # skrl 2.x's writer thread still flushes after the run
    shutil.rmtree(directory, ignore_errors=True)
    report("skrl", skrl.__version__, args, seconds)


if __name__ == "__main__":
    main()
