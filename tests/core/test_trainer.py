"""The neutral trainer (``skrl_like.core.trainer``) driven through each backend's REAL hooks: the backend
``SequentialTrainer``/``StepTrainer``, real PPO agents and memories, and small Gymnasium vector envs."""

import os

import flax.linen as fnn
import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as tnn

import skrl_like.core.agents.tracking as agent_tracking
import skrl_like.jax.agents.dqn as jax_dqn
import skrl_like.jax.agents.ppo as jax_ppo
import skrl_like.jax.envs.wrappers as jax_wrappers
import skrl_like.jax.memories as jax_memories
import skrl_like.jax.models as jax_models
import skrl_like.jax.trainers as jax_trainers
import skrl_like.torch.agents.dqn as torch_dqn
import skrl_like.torch.agents.ppo as torch_ppo
import skrl_like.torch.envs.wrappers as torch_wrappers
import skrl_like.torch.memories as torch_memories
import skrl_like.torch.models as torch_models
import skrl_like.torch.trainers as torch_trainers
from skrl_like.core.trainer import TrainerCore
from skrl_like.core.trainer_setup import TrainerSetup
from skrl_like.core.trainer_state import TrainerRunState
from skrl_like.utils import set_seed

QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
HOOKS = {
    "_no_grad",
    "_stack",
    "_info_scalar",
    "_to_numpy",
    "_is_distributed_worker",
    "_backend_random_state",
    "_set_backend_random_state",
}


# -- the two backends' models ----------------------------------------------------------------------------------


class TorchPolicy(torch_models.CategoricalMixin, torch_models.Model):
    def __init__(self, observation_space, action_space):
        torch_models.Model.__init__(self, observation_space, action_space, "cpu")
        torch_models.CategoricalMixin.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(self.num_observations, 16), tnn.Tanh(), tnn.Linear(16, self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class TorchValue(torch_models.DeterministicMixin, torch_models.Model):
    def __init__(self, observation_space, action_space):
        torch_models.Model.__init__(self, observation_space, action_space, "cpu")
        torch_models.DeterministicMixin.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(self.num_observations, 16), tnn.Tanh(), tnn.Linear(16, 1))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class JaxPolicy(jax_models.CategoricalMixin, jax_models.Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        jax_models.Model.__init__(self, observation_space, action_space, device, **kwargs)
        jax_models.CategoricalMixin.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(self.num_actions)(fnn.tanh(fnn.Dense(16)(inputs["states"]))), {}


class JaxValue(jax_models.DeterministicMixin, jax_models.Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        jax_models.Model.__init__(self, observation_space, action_space, device, **kwargs)
        jax_models.DeterministicMixin.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(1)(fnn.tanh(fnn.Dense(16)(inputs["states"]))), {}


class TorchQNetwork(torch_models.DeterministicMixin, torch_models.Model):
    def __init__(self, observation_space, action_space):
        torch_models.Model.__init__(self, observation_space, action_space, "cpu")
        torch_models.DeterministicMixin.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(self.num_observations, 16), tnn.Tanh(), tnn.Linear(16, self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class JaxQNetwork(jax_models.DeterministicMixin, jax_models.Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        jax_models.Model.__init__(self, observation_space, action_space, device, **kwargs)
        jax_models.DeterministicMixin.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(self.num_actions)(fnn.tanh(fnn.Dense(16)(inputs["states"]))), {}


class Backend:
    """One backend's real classes, and how to build a CartPole env, its memories and PPO agents."""

    def __init__(self, name):
        self.name = name
        self.trainers = torch_trainers if name == "torch" else jax_trainers
        self.wrappers = torch_wrappers if name == "torch" else jax_wrappers
        self.memories = torch_memories if name == "torch" else jax_memories
        self.ppo = torch_ppo if name == "torch" else jax_ppo
        self.dqn = torch_dqn if name == "torch" else jax_dqn

    def to_numpy(self, array):
        return array.detach().cpu().numpy() if isinstance(array, torch.Tensor) else np.asarray(array)

    def cartpole(self, num_envs=4):
        env = gymnasium.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode="sync")
        return self.wrappers.wrap_env(env, verbose=False)

    def memory(self, num_envs, rollouts=8):
        if self.name == "torch":
            return self.memories.RandomMemory(memory_size=rollouts, num_envs=num_envs, device="cpu")
        return self.memories.RandomMemory(memory_size=rollouts, num_envs=num_envs)

    def agent(self, env, memory=None, num_envs=None, rollouts=8, experiment=None):
        memory = memory if memory is not None else self.memory(num_envs or env.num_envs, rollouts)
        cfg = {**self.ppo.PPO_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": experiment or NO_FILES}
        if self.name == "torch":
            models = {
                "policy": TorchPolicy(env.observation_space, env.action_space),
                "value": TorchValue(env.observation_space, env.action_space),
            }
            extra = {"device": "cpu"}
        else:
            models = {
                "policy": JaxPolicy(env.observation_space, env.action_space),
                "value": JaxValue(env.observation_space, env.action_space),
            }
            for role, model in models.items():
                model.init_state_dict(role)
            extra = {}
        return self.ppo.PPO(
            models=models,
            memory=memory,
            cfg=cfg,
            observation_space=env.observation_space,
            action_space=env.action_space,
            **extra,
        )

    def dqn_agent(self, env, memory, experiment=NO_FILES):
        """An off-policy agent (its memory a replay sampled at random) that learns from its third step on."""
        cfg = {**self.dqn.DQN_DEFAULT_CONFIG, "batch_size": 4, "learning_starts": 2, "experiment": experiment}
        network = TorchQNetwork if self.name == "torch" else JaxQNetwork
        models = {role: network(env.observation_space, env.action_space) for role in ("q_network", "target_q_network")}
        if self.name != "torch":
            for role, model in models.items():
                model.init_state_dict(role)
        return self.dqn.DQN(
            models=models,
            memory=memory,
            cfg=cfg,
            observation_space=env.observation_space,
            action_space=env.action_space,
            **({"device": "cpu"} if self.name == "torch" else {}),
        )


@pytest.fixture(params=["torch", "jax"])
def backend(request):
    set_seed(0)
    return Backend(request.param)


def count_updates(agent):
    return len(agent.tracking_data.get("Loss / Policy loss", []))


def spy_on_post_interaction(agent):
    """Record (timestep, agent.training) at each call of the agent's own post_interaction, then run it."""
    calls, original = [], agent.post_interaction

    def post_interaction(timestep, timesteps):
        calls.append((timestep, agent.training))
        original(timestep=timestep, timesteps=timesteps)

    agent.post_interaction = post_interaction
    return calls


# -- one hook style: single inheritance, hooks only --------------------------------------------------------------


def test_trainers_are_single_inheritance_and_the_backend_base_overrides_only_hooks(backend):
    Trainer = backend.trainers.Trainer
    core_chain = (TrainerCore, TrainerRunState, TrainerSetup, object)  # the loop, then the modules beside it
    assert Trainer.__mro__ == (Trainer, *core_chain)
    for concrete in (backend.trainers.SequentialTrainer, backend.trainers.StepTrainer):
        assert concrete.__mro__ == (concrete, Trainer, *core_chain)
    overridden = {name for name, value in vars(Trainer).items() if callable(value)}
    assert overridden <= HOOKS


def test_a_user_subclass_overriding_a_hook_is_used_by_the_loop(backend):
    stacked = []

    class CountingTrainer(backend.trainers.SequentialTrainer):
        def _stack(self, arrays):
            stacked.append([a.shape[0] for a in arrays])
            return super()._stack(arrays)

    env = backend.cartpole(num_envs=4)
    agents = [backend.agent(env, num_envs=2), backend.agent(env, num_envs=2)]
    CountingTrainer(env=env, agents=agents, agents_scope=[2, 2], cfg={**QUIET, "timesteps": 3}).train()
    assert stacked == [[2, 2]] * 3


# -- training through the real hooks ------------------------------------------------------------------------------


def test_sequential_training_updates_once_per_rollout(backend):
    env = backend.cartpole(num_envs=4)
    agent = backend.agent(env, rollouts=8)
    backend.trainers.SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 32}).train()
    assert count_updates(agent) == 32 // 8
    assert agent.training


def test_simultaneous_agents_each_see_and_store_their_scope(backend):
    env = backend.cartpole(num_envs=5)
    agents = [backend.agent(env, num_envs=2), backend.agent(env, num_envs=3)]
    trainer = backend.trainers.SequentialTrainer(
        env=env, agents=agents, agents_scope=[2, 3], cfg={**QUIET, "timesteps": 8}
    )
    assert trainer.agents_scope == [(0, 2), (2, 5)]
    trainer.train()
    for agent, num_envs in zip(agents, (2, 3)):
        states = backend.to_numpy(agent.memory.get_tensor_by_name("states"))
        assert states.shape == (8, num_envs, 4)
        assert count_updates(agent) == 1


def test_step_trainer_runs_one_real_step_per_call(backend):
    env = backend.cartpole(num_envs=3)
    agent = backend.agent(env, rollouts=4)
    trainer = backend.trainers.StepTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8})
    for _ in range(4):
        next_states, rewards, terminated, truncated, infos = trainer.train()
    assert backend.to_numpy(next_states).shape == (3, 4)
    assert backend.to_numpy(rewards).shape == (3, 1)
    np.testing.assert_array_equal(backend.to_numpy(rewards), np.ones((3, 1)))  # CartPole pays 1 per step
    assert count_updates(agent) == 1  # the counter starts at 1: the 4th call is timestep 4 of a 4-step rollout


# -- evaluation goes through the agent's own post_interaction --------------------------------------------------------


def test_evaluation_calls_the_agents_own_post_interaction_in_eval_mode(backend, tmp_path):
    env = backend.cartpole(num_envs=2)
    experiment = {"directory": str(tmp_path), "experiment_name": "run", "write_interval": 0, "checkpoint_interval": 4}
    agent = backend.agent(env, experiment=experiment)
    calls = spy_on_post_interaction(agent)
    backend.trainers.SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8}).eval()
    assert calls == [(timestep, False) for timestep in range(8)]
    assert count_updates(agent) == 0  # 8 steps is one 8-step rollout: training would have updated once
    checkpoints = sorted(os.listdir(tmp_path / "run" / "checkpoints"))
    extension = ".pt" if backend.name == "torch" else ".pickle"
    assert f"agent_4{extension}" in checkpoints and f"agent_8{extension}" in checkpoints


def test_step_trainer_eval_calls_the_agents_own_post_interaction(backend):
    env = backend.cartpole(num_envs=2)
    agent = backend.agent(env)
    calls = spy_on_post_interaction(agent)
    trainer = backend.trainers.StepTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8})
    trainer.train(timestep=0)
    trainer.eval(timestep=1)
    assert calls == [(0, True), (1, False)]


def test_evaluation_tracks_episodes_through_the_real_tracker(backend, tmp_path):
    env = backend.cartpole(num_envs=2)
    experiment = {"directory": str(tmp_path), "write_interval": 1000, "checkpoint_interval": 0}
    agent = backend.agent(env, experiment=experiment)
    trainer = backend.trainers.SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 60})
    trainer.eval()
    stats = agent._tracker.collect()
    assert len(stats["Reward / Instantaneous reward (mean)"]) == 60
    assert stats["Reward / Instantaneous reward (max)"] == [1.0] * 60


# -- bad input is rejected at construction, with the fix ---------------------------------------------------------


def test_the_same_agent_twice_is_rejected(backend):
    env = backend.cartpole(num_envs=4)
    agent = backend.agent(env, num_envs=2)
    with pytest.raises(ValueError, match=r"agents\[1\] is the same object as agents\[0\].*one agent .* per scope"):
        backend.trainers.SequentialTrainer(env=env, agents=[agent, agent], agents_scope=[2, 2], cfg=QUIET)


def test_two_agents_sharing_one_memory_are_rejected(backend):
    env = backend.cartpole(num_envs=4)
    memory = backend.memory(num_envs=2)
    agents = [backend.agent(env, memory=memory), backend.agent(env, memory=memory)]
    with pytest.raises(ValueError, match=r"agents\[0\] and agents\[1\] share one memory object.*its own memory"):
        backend.trainers.StepTrainer(env=env, agents=agents, agents_scope=[2, 2], cfg=QUIET)


def test_off_policy_agents_share_one_replay_memory_side_by_side(backend):
    # skrl's shared-memory example: each step the agents write their scopes' rows side by side (in the order of
    # `agents`), so every memory row is one timestep of all their environments, and each agent samples all of it
    env = backend.cartpole(num_envs=3)
    memory = backend.memory(num_envs=3, rollouts=16)
    agents = [backend.dqn_agent(env, memory), backend.dqn_agent(env, memory)]
    trainer = backend.trainers.SequentialTrainer(
        env=env, agents=agents, agents_scope=[1, 2], cfg={**QUIET, "timesteps": 5}
    )
    trainer.train()
    assert (memory.memory_index, memory.env_index, len(memory)) == (5, 0, 15)
    states = backend.to_numpy(memory.get_tensor_by_name("states"))[:5]
    next_states = backend.to_numpy(memory.get_tensor_by_name("next_states"))[:5]
    # slot e of every row is environment e (no CartPole episode ends within 5 steps)
    np.testing.assert_array_equal(states[1:], next_states[:-1])
    assert not np.isnan(states).any()
    for agent in agents:  # both learned (timesteps 2, 3, 4), from the one memory
        assert len(agent.tracking_data["Loss / Q-network loss"]) == 3


def test_an_on_policy_agent_sharing_its_rollout_memory_is_rejected(backend):
    env = backend.cartpole(num_envs=4)
    memory = backend.memory(num_envs=4)
    agents = [backend.dqn_agent(env, memory), backend.agent(env, memory=memory)]
    with pytest.raises(ValueError, match=r"agents\[1\] \(PPO\) learns from its own rollout in it.*Only off-policy"):
        backend.trainers.SequentialTrainer(env=env, agents=agents, agents_scope=[2, 2], cfg=QUIET)


def test_a_shared_replay_memory_must_hold_all_its_agents_scopes(backend):
    env = backend.cartpole(num_envs=3)
    memory = backend.memory(num_envs=2)
    agents = [backend.dqn_agent(env, memory), backend.dqn_agent(env, memory)]
    with pytest.raises(ValueError, match=r"num_envs=2, but their scopes hold 1 \+ 2 = 3 environments.*num_envs=3"):
        backend.trainers.SequentialTrainer(env=env, agents=agents, agents_scope=[1, 2], cfg=QUIET)


@pytest.mark.parametrize(
    "scope, error, message",
    [
        ([(0, 2), (2, 4)], TypeError, r"agents_scope\[0\] is \(0, 2\), a range: .* counts, not \(start, end\)"),
        ([2.0, 2.0], TypeError, r"agents_scope\[0\] is 2.0 \(float\), not an int"),
        (["2", "2"], TypeError, r"agents_scope\[0\] is '2' \(str\), not an int"),
        ([-1, 5], ValueError, r"agents_scope\[0\] is -1: each agent needs at least one environment"),
        ([True, 3], TypeError, r"agents_scope\[0\] is True \(bool\), not an int"),
        (range(2, 4), TypeError, r"agents_scope must be a list of ints, got range"),
        (4, TypeError, r"agents_scope must be a list of ints, got int"),
    ],
)
def test_malformed_agents_scope_is_rejected_with_the_fix(backend, scope, error, message):
    env = backend.cartpole(num_envs=4)
    agents = [backend.agent(env, num_envs=2), backend.agent(env, num_envs=2)]
    with pytest.raises(error, match=message) as raised:
        backend.trainers.SequentialTrainer(env=env, agents=agents, agents_scope=scope, cfg=QUIET)
    assert "e.g. agents_scope=[3, 5]" in str(raised.value)


def test_scopes_as_a_tuple_or_numpy_ints_are_accepted(backend):
    env = backend.cartpole(num_envs=4)
    agents = [backend.agent(env, num_envs=1), backend.agent(env, num_envs=3)]
    trainer = backend.trainers.SequentialTrainer(
        env=env, agents=agents, agents_scope=(np.int64(1), np.int32(3)), cfg=QUIET
    )
    assert trainer.agents_scope == [(0, 1), (1, 4)]


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("timesteps", 0, "an int >= 1"),
        ("timesteps", -5, "an int >= 1"),
        ("timesteps", 3.5, "an int >= 1"),
        ("timesteps", "100", "an int >= 1"),
        ("timesteps", True, "an int >= 1"),
        ("headless", "yes", "a bool"),
        ("headless", 1, "a bool"),
        ("disable_progressbar", "no", "a bool, or None"),
        ("close_environment_at_exit", 0, "a bool"),
        ("stochastic_evaluation", "False", "a bool"),
        ("environment_info", 5, "a str"),
    ],
)
@pytest.mark.parametrize("trainer_name", ["SequentialTrainer", "StepTrainer"])
def test_bad_cfg_values_are_rejected_with_the_fix(backend, trainer_name, key, value, expected):
    env = backend.cartpole(num_envs=2)
    trainer_class = getattr(backend.trainers, trainer_name)
    with pytest.raises(
        ValueError, match=rf"{trainer_name} cfg\['{key}'\] must be {expected}.*pass e.g. cfg="
    ) as raised:
        trainer_class(env=env, agents=backend.agent(env), cfg={**QUIET, key: value})
    assert repr(value) in str(raised.value)


def test_good_cfg_values_are_accepted(backend):
    env = backend.cartpole(num_envs=2)
    cfg = {**QUIET, "timesteps": np.int64(7), "disable_progressbar": None, "headless": np.bool_(True)}
    trainer = backend.trainers.SequentialTrainer(env=env, agents=backend.agent(env), cfg=cfg)
    assert trainer.timesteps == 7 and type(trainer.cfg["timesteps"]) is int
    assert trainer.disable_progressbar is None


def test_the_base_trainer_keeps_its_timesteps_fallback_of_zero(backend):
    env = backend.cartpole(num_envs=2)
    trainer = backend.trainers.Trainer(env=env, agents=backend.agent(env), cfg=QUIET)
    assert trainer.timesteps == 0
    with pytest.raises(ValueError, match=r"Trainer cfg\['timesteps'\] must be an int >= 1"):
        backend.trainers.Trainer(env=env, agents=backend.agent(env), cfg={**QUIET, "timesteps": 0})


def test_with_writing_off_each_tag_keeps_only_its_most_recent_values(backend, monkeypatch):
    # nothing clears tracking_data when write_interval is 0: a long run must not grow by a few values per update
    monkeypatch.setattr(agent_tracking, "TRACKING_HISTORY", 3)
    env = backend.cartpole(num_envs=2)
    agent = backend.dqn_agent(env, backend.memory(num_envs=2, rollouts=32))
    backend.trainers.SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12}).train()
    losses = agent.tracking_data["Loss / Q-network loss"]  # one per update: timesteps 2..11, 10 in all
    assert 3 <= len(losses) <= 6
    agent.track_data("Loss / Q-network loss", -1.0)
    assert agent.tracking_data["Loss / Q-network loss"][-1] == -1.0  # the newest is kept
    for _ in range(20):
        agent.track_data("Some / tag", 1.0)
    assert 3 <= len(agent.tracking_data["Some / tag"]) <= 6


def test_with_writing_on_tracked_values_are_kept_until_the_next_write(backend, tmp_path, monkeypatch):
    monkeypatch.setattr(agent_tracking, "TRACKING_HISTORY", 3)
    env = backend.cartpole(num_envs=2)
    experiment = {"directory": str(tmp_path), "write_interval": 100, "checkpoint_interval": 0}
    agent = backend.dqn_agent(env, backend.memory(num_envs=2, rollouts=32), experiment)
    backend.trainers.SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12}).train()
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 10  # all of them: the next write reduces them
