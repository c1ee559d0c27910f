"""Benchmark peer: skrl 1.4.3 (JAX backend) PPO on CartPole-v1.

Run with the jax peer venv (jax/jaxlib 0.9.2, flax 0.12.6, NO torch; see benchmarks/setup_peers.sh):
    /work/bench_venvs/jax/bin/python benchmarks/peers/skrl_jax_ppo_cartpole.py --config cleanrl --seed 0

skrl's ``config.jax.backend`` is left at its default ("numpy"). Prints exactly one JSON line. ``seconds``
is the wall time of ``SequentialTrainer.train()`` only, JIT compilation included (the user pays it).
"""

import os

# must precede the jax import
os.environ.update(
    {
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
        "JAX_PLATFORMS": "cpu",
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
)

import logging  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import numpy as np  # noqa: E402
import skrl  # noqa: E402
from common import Timer, emit, evaluate, parse_args  # noqa: E402
from configs import ARCHITECTURE, CONFIGS, SKRL_EXPERIMENT, SKRL_TRAINER_CFG, make_env, plan  # noqa: E402

skrl.logger.setLevel(logging.ERROR)  # silence import-time notes (Isaac/GPU availability)

from skrl.agents.jax.ppo import PPO, PPO_DEFAULT_CONFIG  # noqa: E402
from skrl.envs.wrappers.jax import wrap_env  # noqa: E402
from skrl.memories.jax import RandomMemory  # noqa: E402
from skrl.models.jax import CategoricalMixin, DeterministicMixin, Model  # noqa: E402
from skrl.trainers.jax import SequentialTrainer  # noqa: E402
from skrl.utils import set_seed  # noqa: E402

_INIT = ARCHITECTURE["init"]
_ZEROS = nn.initializers.constant(_INIT["bias"])


def _mlp(x, hidden, out_features, head_gain):
    for width in hidden:
        x = nn.tanh(nn.Dense(width, kernel_init=nn.initializers.orthogonal(_INIT["hidden_gain"]), bias_init=_ZEROS)(x))
    return nn.Dense(out_features, kernel_init=nn.initializers.orthogonal(head_gain), bias_init=_ZEROS)(x)


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, unnormalized_log_prob=True, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self, unnormalized_log_prob)

    @nn.compact
    def __call__(self, inputs, role):
        return _mlp(inputs["states"], ARCHITECTURE["policy"]["hidden"], self.num_actions, _INIT["policy_head_gain"]), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, clip_actions=False, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self, clip_actions)

    @nn.compact
    def __call__(self, inputs, role):
        return _mlp(inputs["states"], ARCHITECTURE["value"]["hidden"], 1, _INIT["value_head_gain"]), {}


def main() -> None:
    args = parse_args(__doc__)
    run = plan(args.config, args.timesteps)
    set_seed(args.seed)

    env = wrap_env(make_env(run["num_envs"], seed=args.seed), wrapper="gymnasium", verbose=False)
    device = env.device
    models = {
        "policy": Policy(env.observation_space, env.action_space, device),
        "value": Value(env.observation_space, env.action_space, device),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    memory = RandomMemory(memory_size=run["rollouts"], num_envs=env.num_envs, device=device)

    with tempfile.TemporaryDirectory() as tmp:
        cfg = PPO_DEFAULT_CONFIG.copy()
        cfg.update(CONFIGS[args.config]["ppo"])
        cfg["experiment"] = {**PPO_DEFAULT_CONFIG["experiment"], **SKRL_EXPERIMENT, "directory": tmp}
        agent = PPO(
            models=models,
            memory=memory,
            cfg=cfg,
            observation_space=env.observation_space,
            action_space=env.action_space,
            device=device,
        )
        trainer = SequentialTrainer(env=env, agents=agent, cfg={**SKRL_TRAINER_CFG, "timesteps": run["vector_steps"]})
        with Timer() as timer:
            trainer.train()
            jax.block_until_ready(models["policy"].state_dict.params)

    final = None
    if not args.no_eval:
        policy = models["policy"]

        def act(obs):
            _, _, outputs = policy.act({"states": obs}, role="policy")
            return np.asarray(outputs["net_output"]).argmax(axis=-1)

        final = evaluate(act, args.seed)
    env.close()
    emit("skrl", "jax", args.config, args.seed, run["env_steps"], timer.seconds, final)


if __name__ == "__main__":
    main()
