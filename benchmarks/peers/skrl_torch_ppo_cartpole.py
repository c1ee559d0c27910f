"""Benchmark peer: skrl 1.4.3 (PyTorch backend) PPO on CartPole-v1.

Run with the torch peer venv (see benchmarks/setup_peers.sh):
    /work/bench_venvs/torch/bin/python benchmarks/peers/skrl_torch_ppo_cartpole.py --config cleanrl --seed 0

Prints exactly one JSON line (benchmarks/common.py: emit). ``seconds`` is the wall time of
``SequentialTrainer.train()`` only (agent/model construction and the final evaluation excluded).
"""

import os

os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})

import logging  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from common import Timer, emit, evaluate, parse_args  # noqa: E402
from configs import ARCHITECTURE, CONFIGS, SKRL_EXPERIMENT, SKRL_TRAINER_CFG, make_env, plan  # noqa: E402

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

import skrl  # noqa: E402

skrl.logger.setLevel(logging.ERROR)  # silence import-time notes (Isaac/GPU availability)

from skrl.agents.torch.ppo import PPO, PPO_DEFAULT_CONFIG  # noqa: E402
from skrl.envs.wrappers.torch import wrap_env  # noqa: E402
from skrl.memories.torch import RandomMemory  # noqa: E402
from skrl.models.torch import CategoricalMixin, DeterministicMixin, Model  # noqa: E402
from skrl.trainers.torch import SequentialTrainer  # noqa: E402
from skrl.utils import set_seed  # noqa: E402


def mlp(in_features: int, hidden: list, out_features: int, head_gain: float) -> nn.Sequential:
    init = ARCHITECTURE["init"]
    layers, last = [], in_features
    for width in hidden:
        layers += [nn.Linear(last, width), nn.Tanh()]
        last = width
    layers.append(nn.Linear(last, out_features))
    linears = [m for m in layers if isinstance(m, nn.Linear)]
    for i, linear in enumerate(linears):
        nn.init.orthogonal_(linear.weight, gain=head_gain if i == len(linears) - 1 else init["hidden_gain"])
        nn.init.constant_(linear.bias, init["bias"])
    return nn.Sequential(*layers)


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        self.net = mlp(
            self.num_observations,
            ARCHITECTURE["policy"]["hidden"],
            self.num_actions,
            ARCHITECTURE["init"]["policy_head_gain"],
        )

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self, clip_actions=False)
        self.net = mlp(
            self.num_observations, ARCHITECTURE["value"]["hidden"], 1, ARCHITECTURE["init"]["value_head_gain"]
        )

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


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

    final = None
    if not args.no_eval:
        policy = models["policy"]
        policy.eval()

        def act(obs):
            with torch.no_grad():
                _, _, outputs = policy.act({"states": torch.as_tensor(obs, device=device)}, role="policy")
            return outputs["net_output"].argmax(dim=-1).cpu().numpy()

        final = evaluate(act, args.seed)
    env.close()
    emit("skrl", "torch", args.config, args.seed, run["env_steps"], timer.seconds, final)


if __name__ == "__main__":
    main()
