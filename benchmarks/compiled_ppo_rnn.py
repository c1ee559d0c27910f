"""Compiled PPO_RNN (GRU) on velocity-masked gymnax CartPole-v1 (observations ``[x, theta]``), one JSON line per run.

The shape of PureJaxRL's ``ppo_rnn.py``: 4 envs x 128 steps per rollout, 4 epochs x 4 mini-batches (each mini-batch
one environment's whole 128-step sequence: ``sequence_length`` 128), lr 2.5e-4 (constant; ``--anneal-lr``: decayed
linearly to 0 over the run with ``LinearLR``, one step per epoch, as PureJaxRL's ``ANNEAL_LR`` does per update),
gamma 0.99, lambda 0.95, clip 0.2, value coefficient 0.5, entropy 0.01, gradient norm 0.5, ~5e5 env steps. The models:
Dense(128, relu) -> GRU(128) -> Dense(128, relu) -> head, one for the policy (categorical) and one for the value, each
with its own hidden states (PureJaxRL shares the embedding and the GRU between its heads).

Timed apart: the compilation, then the compiled run (env-steps/s over every run of a vmapped call, wall and process
CPU time). The final return: the mean of 20 greedy episodes (the policy's mode) after training, per run, with the
ordinary evaluation loop (``CompiledTrainer.evaluate_episodes``), the hidden states carried through the episodes.

    python benchmarks/compiled_ppo_rnn.py --seed 0                      # one run, ~5e5 steps
    python benchmarks/compiled_ppo_rnn.py --seed 0 --anneal-lr          # the same, the rate decayed linearly to 0
    python benchmarks/compiled_ppo_rnn.py --seeds 3 --updates 976      # 3 seeds vmapped in one compiled call
    python benchmarks/compiled_ppo_rnn.py --seed 0 --updates 4 --hidden 16   # a quick check that it runs

Set OMP_NUM_THREADS=1 and XLA_FLAGS=--xla_cpu_multi_thread_eigen=false on the shared 2-core machine. A vmapped run
once stalled for good there (every thread waiting): batched QRs (the GRU's orthogonal initialisers, drawn for every
seed at once) deadlocked XLA's 2-thread intra-op pool; the trainer now draws the seeds one after another.
"""

import argparse
import json
import time

import numpy as np

NUM_ENVS, ROLLOUTS, EPOCHS, MINI_BATCHES = 4, 128, 4, 4
HYPER = {"lr": 2.5e-4, "gamma": 0.99, "lambda": 0.95, "clip": 0.2, "vf": 0.5, "ent": 0.01, "max_grad_norm": 0.5}
PPO_KEYS = {"learning_rate": "lr", "discount_factor": "gamma", "lambda": "lambda", "ratio_clip": "clip",
            "value_loss_scale": "vf", "entropy_loss_scale": "ent", "grad_norm_clip": "max_grad_norm"}  # fmt: skip


def run(seed: int, seeds: int, updates: int, hidden: int, episodes: int, chunks: int, anneal_lr: bool) -> dict:
    import flax.linen as nn

    from skrl_like import config
    from skrl_like.envs.masked_gymnax import masked_cartpole
    from skrl_like.jax.agents.ppo import PPO_DEFAULT_CONFIG, PPO_RNN
    from skrl_like.jax.envs.wrappers import wrap_env
    from skrl_like.jax.memories import RandomMemory
    from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model
    from skrl_like.jax.models.recurrent import RecurrentLayer, hidden_state_sizes
    from skrl_like.jax.resources.schedulers import LinearLR
    from skrl_like.jax.trainers import CompiledTrainer
    from skrl_like.utils import set_seed

    config.jax.backend = "jax"
    set_seed(seed)
    env = wrap_env(masked_cartpole()[0], verbose=False, num_envs=NUM_ENVS)

    class Recurrent(Model):
        """Dense(hidden, relu) -> GRU(hidden) -> Dense(hidden, relu) -> ``outputs`` units."""

        def setup(self):
            self.embedding = nn.Dense(hidden)
            self.gru = RecurrentLayer("GRU", hidden, 1, ROLLOUTS)
            self.trunk = nn.Dense(hidden)
            self.head = nn.Dense(self.outputs)

        def get_specification(self):
            return {"rnn": {"sequence_length": ROLLOUTS, "sizes": hidden_state_sizes("GRU", 1, NUM_ENVS, hidden)}}

        def features(self, inputs):
            terminated = inputs.get("terminated")  # given in the training layout only
            x = nn.relu(self.embedding(inputs["states"]))
            x, states = self.gru(x, inputs["rnn"], terminated, terminated is not None)
            return self.head(nn.relu(self.trunk(x))), states

    class Policy(CategoricalMixin, Recurrent):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            CategoricalMixin.__init__(self)

        @property
        def outputs(self):
            return self.num_actions

        def __call__(self, inputs, role=""):
            logits, states = self.features(inputs)
            return logits, {"rnn": states}

    class Value(DeterministicMixin, Recurrent):
        outputs = 1

        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        def __call__(self, inputs, role=""):
            value, states = self.features(inputs)
            return value, {"rnn": states}

    models = {"policy": Policy(env.observation_space, env.action_space), "value": Value(env.observation_space, None)}
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {**PPO_DEFAULT_CONFIG, **{key: HYPER[name] for key, name in PPO_KEYS.items()}}
    cfg.update(rollouts=ROLLOUTS, learning_epochs=EPOCHS, mini_batches=MINI_BATCHES)
    if anneal_lr:  # PPO steps its scheduler once per epoch: to 0 after the run's last epoch
        cfg["learning_rate_scheduler"] = LinearLR
        cfg["learning_rate_scheduler_kwargs"] = {
            "start_factor": 1.0,
            "end_factor": 0.0,
            "total_iters": updates * EPOCHS,
        }
    cfg["experiment"] = {"write_interval": 0, "checkpoint_interval": 0}
    memory = RandomMemory(memory_size=ROLLOUTS, num_envs=NUM_ENVS)
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space}
    agent = PPO_RNN(models=models, memory=memory, cfg=cfg, **spaces)
    vmapped = {"seeds": list(range(seed, seed + seeds))} if seeds > 1 else {}
    trainer_cfg = {"timesteps": ROLLOUTS * updates, "updates_per_chunk": updates // chunks, **vmapped}
    trainer_cfg["disable_progressbar"] = chunks == 1  # the bar moves once per chunk
    trainer = CompiledTrainer(env=env, agents=agent, cfg={**trainer_cfg, "close_environment_at_exit": False})
    metrics = trainer.train()
    env_steps = NUM_ENVS * ROLLOUTS * updates * seeds
    returns = []
    for index in range(seeds):
        if seeds > 1:
            trainer.load_run(index)
        returns.append(float(np.mean(trainer.evaluate_episodes(episodes, max_timesteps=100_000))))
    curves = np.asarray(metrics["Reward / Total reward (mean)"]).reshape(seeds, -1)
    training = curves[:, -10:]
    # ten points per run: the mean training return over each tenth of the updates
    tenths = [[round(float(np.nanmean(part)), 1) for part in np.array_split(row, 10)] for row in curves]
    rates = np.asarray(metrics.get("Learning / Learning rate", np.full(curves.shape, np.nan))).reshape(seeds, -1)
    return {
        "library": "skrl_like",
        "algorithm": "PPO_RNN (GRU), CompiledTrainer",
        "env": "gymnax CartPole-v1, velocities masked ([x, theta])",
        "seeds": list(range(seed, seed + seeds)),
        "updates": updates,
        "hidden": hidden,
        "learning_rate": "linear to 0" if anneal_lr else "constant",
        "env_steps_per_run": NUM_ENVS * ROLLOUTS * updates,
        "compile_seconds": round(trainer.timings["compile_seconds"], 2),
        "run_seconds": round(trainer.timings["run_seconds"], 2),
        "env_steps_per_second": round(env_steps / trainer.timings["run_seconds"]),
        "env_steps_per_cpu_second": round(env_steps / trainer.timings["run_cpu_seconds"]),
        "greedy_return": returns,  # per run: the mean over `episodes` greedy episodes
        "greedy_episodes": episodes,
        "training_return_last_10_updates": [float(np.nanmean(row)) for row in training],
        "training_return_by_tenth": tenths,
        "learning_rate_first_last_update": [[float(row[0]), float(row[-1])] for row in rates],
        "compilations": trainer.compilations,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument(
        "--seeds", type=int, default=1, help="runs vmapped in one compiled call (seeds seed, seed+1...)"
    )
    parser.add_argument("--updates", type=int, default=976, help="rollouts of 4 x 128 steps (976: 499,712 steps)")
    parser.add_argument("--hidden", type=int, default=128, help="units of the embedding, the GRU and the trunk")
    parser.add_argument("--episodes", type=int, default=20, help="greedy evaluation episodes per run")
    parser.add_argument(
        "--chunks", type=int, default=1, help="compiled calls the run is cut into (progress after each)"
    )
    parser.add_argument("--anneal-lr", action="store_true", help="decay the rate linearly to 0 over the run (LinearLR)")
    parser.add_argument("--output", default=None, help="append the JSON line to this file too")
    args = parser.parse_args()
    line = json.dumps(run(args.seed, args.seeds, args.updates, args.hidden, args.episodes, args.chunks, args.anneal_lr))
    print(line)
    if args.output:
        with open(args.output, "a") as output:
            output.write(line + "\n")


if __name__ == "__main__":
    main()
