"""Benchmark peer: skrl 1.4.3's PPO_RNN / SAC_RNN (torch) for benchmarks/rnn_speed.py (run it with the torch peer
venv of benchmarks/setup_peers.sh: ``/work/bench_venvs/torch/bin/python benchmarks/rnn_speed.py --library skrl``).

The models are written the way skrl 1.4.3's recurrent examples (``torch_gymnasium_pendulumnovel_{ppo,sac}_gru.py``)
write them: a batch-first ``nn.GRU`` whose hidden state the model reads from ``inputs["rnn"]``; when training, the
batch is viewed as ``(sequences, L, features)``, the state stored at each sequence's first step (the target critics:
second step) is the initial one, and the GRU runs piecewise between the steps where some sequence's episode ended.
The layer sizes, activations and agent settings come from ``rnn_speed.SETTINGS`` (the ones skrl_like runs).
"""

import tempfile
import time

import torch
import torch.nn as nn

import skrl

skrl.logger.setLevel("ERROR")

from rnn_learning import make_masked_env  # noqa: E402
from skrl.agents.torch.ppo import PPO_DEFAULT_CONFIG, PPO_RNN  # noqa: E402
from skrl.agents.torch.sac import SAC_DEFAULT_CONFIG, SAC_RNN  # noqa: E402
from skrl.envs.wrappers.torch import wrap_env  # noqa: E402
from skrl.memories.torch import RandomMemory  # noqa: E402
from skrl.models.torch import CategoricalMixin, DeterministicMixin, GaussianMixin, Model  # noqa: E402
from skrl.resources.preprocessors.torch import RunningStandardScaler  # noqa: E402
from skrl.trainers.torch import SequentialTrainer  # noqa: E402
from skrl.utils import set_seed  # noqa: E402

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


class RecurrentModel(Model):
    """The GRU part every model of the examples repeats: ``self.gru`` over skrl's acting / training layouts."""

    def __init__(self, observation_space, action_space, device, settings):
        Model.__init__(self, observation_space, action_space, device)
        self.num_envs, self.hidden_size = settings.num_envs, settings.hidden
        self.sequence_length = settings.sequence_length
        self.gru = nn.GRU(input_size=self.num_observations, hidden_size=self.hidden_size, batch_first=True)

    def get_specification(self):
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": [(1, self.num_envs, self.hidden_size)]}}

    def gru_features(self, inputs, training: bool, sequence_index: int = 0):
        states, hidden = inputs["states"], inputs["rnn"][0]
        if not training:  # acting: one step of every env
            output, hidden = self.gru(states.view(-1, 1, states.shape[-1]), hidden)
            return output.flatten(0, 1), hidden
        length = self.sequence_length
        sequence = states.view(-1, length, states.shape[-1])
        hidden = hidden.view(1, -1, length, hidden.shape[-1])[:, :, sequence_index, :].contiguous()
        terminated = inputs.get("terminated", None)
        if terminated is None or not torch.any(terminated):
            output, hidden = self.gru(sequence, hidden)
            return output.flatten(0, 1), hidden
        terminated = terminated.view(-1, length)
        cuts = [0] + (terminated[:, :-1].any(dim=0).nonzero(as_tuple=True)[0] + 1).tolist() + [length]
        outputs = []
        for start, end in zip(cuts[:-1], cuts[1:]):
            output, hidden = self.gru(sequence[:, start:end, :], hidden)
            hidden[:, terminated[:, end - 1], :] = 0
            outputs.append(output)
        return torch.cat(outputs, dim=1).flatten(0, 1), hidden

    def compute(self, inputs, role):  # the logits / the value: the GRU then ``self.net``
        features, hidden = self.gru_features(inputs, self.training)
        return self.net(features), {"rnn": [hidden]}


def head(inputs: int, settings, outputs: int) -> nn.Sequential:
    activation = ACTIVATIONS[settings.activation]
    return nn.Sequential(nn.Linear(inputs, settings.mlp), activation(), nn.Linear(settings.mlp, outputs))


class CategoricalPolicy(CategoricalMixin, RecurrentModel):
    def __init__(self, observation_space, action_space, device, settings):
        RecurrentModel.__init__(self, observation_space, action_space, device, settings)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        self.net = head(self.hidden_size, settings, self.num_actions)


class GaussianPolicy(GaussianMixin, RecurrentModel):
    def __init__(self, observation_space, action_space, device, settings):
        RecurrentModel.__init__(self, observation_space, action_space, device, settings)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)
        self.net = head(self.hidden_size, settings, self.num_actions)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        features, hidden = self.gru_features(inputs, self.training)
        return 2 * torch.tanh(self.net(features)), self.log_std_parameter, {"rnn": [hidden]}  # Pendulum: [-2, 2]


class Value(DeterministicMixin, RecurrentModel):
    def __init__(self, observation_space, action_space, device, settings):
        RecurrentModel.__init__(self, observation_space, action_space, device, settings)
        DeterministicMixin.__init__(self, clip_actions=False)
        self.net = head(self.hidden_size, settings, 1)


class Critic(DeterministicMixin, RecurrentModel):
    def __init__(self, observation_space, action_space, device, settings):
        RecurrentModel.__init__(self, observation_space, action_space, device, settings)
        DeterministicMixin.__init__(self, clip_actions=False)
        self.net = head(self.hidden_size + self.num_actions, settings, 1)

    def compute(self, inputs, role):  # used in training only; the targets see the next states (as the example)
        index = 1 if role in ("target_critic_1", "target_critic_2") else 0
        features, hidden = self.gru_features(inputs, True, index)
        return self.net(torch.cat([features, inputs["taken_actions"]], dim=1)), {"rnn": [hidden]}


def agent_and_memory(settings, env, directory: str):
    device, spaces = env.device, (env.observation_space, env.action_space, env.device)
    experiment = {"directory": directory, "write_interval": 0, "checkpoint_interval": 0}
    if settings.agent == "PPO":
        policy = CategoricalPolicy if settings.env == "cartpole" else GaussianPolicy
        models = {"policy": policy(*spaces, settings), "value": Value(*spaces, settings)}
        cfg = PPO_DEFAULT_CONFIG.copy()
        cfg.update({
            "rollouts": settings.rollouts, "learning_epochs": settings.epochs, "mini_batches": settings.mini_batches,
            "discount_factor": settings.gamma, "lambda": settings.gae_lambda, "learning_rate": settings.lr,
            "grad_norm_clip": 0.5, "value_loss_scale": 0.5, "entropy_loss_scale": settings.entropy,
        })
        if settings.scale:
            cfg.update({
                "state_preprocessor": RunningStandardScaler,
                "state_preprocessor_kwargs": {"size": env.observation_space, "device": device},
                "value_preprocessor": RunningStandardScaler,
                "value_preprocessor_kwargs": {"size": 1, "device": device},
            })
        memory = RandomMemory(memory_size=settings.rollouts, num_envs=env.num_envs, device=device)
        Agent = PPO_RNN
    else:
        models = {"policy": GaussianPolicy(*spaces, settings)}
        for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
            models[role] = Critic(*spaces, settings)
        cfg = SAC_DEFAULT_CONFIG.copy()
        cfg.update({"discount_factor": 0.98, "batch_size": settings.batch_size, "random_timesteps": 0,
                    "learning_starts": settings.learning_starts, "learn_entropy": True})
        memory = RandomMemory(memory_size=settings.memory_size, num_envs=env.num_envs, device=device)
        Agent = SAC_RNN
    cfg["experiment"] = {**cfg["experiment"], **experiment}
    agent = Agent(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
                  action_space=env.action_space, device=device)
    return agent


def train_skrl(settings) -> tuple:
    """Train skrl 1.4.3's agent; returns (agent class name, wall and CPU seconds of ``train()``)."""
    torch.set_num_threads(1)
    set_seed(settings.seed)
    vector = make_masked_env(settings.env, settings.num_envs, same_step_autoreset=True)
    env = wrap_env(vector, wrapper="gymnasium", verbose=False)
    env._env.reset(seed=settings.seed)
    with tempfile.TemporaryDirectory() as directory:
        agent = agent_and_memory(settings, env, directory)
        trainer_cfg = {"timesteps": settings.timesteps // settings.num_envs, "headless": True,
                       "disable_progressbar": True, "close_environment_at_exit": False}
        trainer = SequentialTrainer(cfg=trainer_cfg, env=env, agents=agent)
        start, cpu_start = time.perf_counter(), time.process_time()
        trainer.train()
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    env.close()
    return type(agent).__name__, seconds, cpu_seconds
