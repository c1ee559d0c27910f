"""TRPO (torch): the config, conjugate gradient, the Gaussian KL, the line search, one policy step on a tiny hand-made
problem against torch.distributions, the whole update's bookkeeping, save/load, seeding, bad input and one short
learning run."""

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn
from torch.distributions import Normal, kl_divergence

from skrl_like.torch.agents.trpo import TRPO, TRPO_DEFAULT_CONFIG
from skrl_like.torch.agents.trpo.trpo import Trial, conjugate_gradient, gaussian_kl, line_search
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import ValueMlp

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,))
ACTIONS = gymnasium.spaces.Box(-1.0, 1.0, (1,))

SPEC_KEYS = [  # spec/agents.md §4.13, in order, then the experiment dict
    "rollouts", "learning_epochs", "mini_batches", "discount_factor", "lambda", "value_learning_rate",
    "learning_rate_scheduler", "learning_rate_scheduler_kwargs", "state_preprocessor", "state_preprocessor_kwargs",
    "value_preprocessor", "value_preprocessor_kwargs", "random_timesteps", "learning_starts", "grad_norm_clip",
    "value_loss_scale", "damping", "max_kl_divergence", "conjugate_gradient_steps", "max_backtrack_steps",
    "accept_ratio", "step_fraction", "rewards_shaper", "time_limit_bootstrap", "experiment",
]  # fmt: skip


class LinearPolicy(GaussianMixin, Model):
    """mean = W s + b, a state-independent log standard deviation."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=False)
        self.linear = nn.Linear(self.num_observations, self.num_actions)
        self.log_std_parameter = nn.Parameter(torch.full((self.num_actions,), -0.5))

    def compute(self, inputs, role):
        return self.linear(inputs["states"]), self.log_std_parameter, {}


class MlpPolicy(LinearPolicy):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu"):
        super().__init__(observation_space, action_space, device)
        self.linear = nn.Sequential(nn.Linear(self.num_observations, 32), nn.Tanh(), nn.Linear(32, self.num_actions))


class Value(ValueMlp):
    """This file's value model: 32 hidden units."""

    hidden = 32


def make_trpo(rollouts=8, num_envs=2, policy=None, observation_space=OBSERVATIONS, action_space=ACTIONS, **cfg):
    models = {
        "policy": policy or LinearPolicy(observation_space, action_space),
        "value": Value(observation_space, action_space),
    }
    return TRPO(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=num_envs, device="cpu"),
        cfg={"rollouts": rollouts, "experiment": NO_FILES, **cfg},
        observation_space=observation_space,
        action_space=action_space,
        device="cpu",
    )


def pendulum(num_envs=4):
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def record_rollout(agent, rng, rollouts=8, num_envs=2):
    """Feed one hand-made rollout through record_transition (actions from the current policy's range)."""
    agent.init(trainer_cfg={"timesteps": rollouts})
    states = rng.normal(size=(rollouts + 1, num_envs, 2)).astype(np.float32)
    for t in range(rollouts):
        agent.record_transition(
            states=torch.from_numpy(states[t]),
            actions=torch.from_numpy(rng.normal(size=(num_envs, 1)).astype(np.float32)),
            rewards=torch.from_numpy(rng.normal(size=(num_envs, 1)).astype(np.float32)),
            next_states=torch.from_numpy(states[t + 1]),
            terminated=torch.zeros(num_envs, 1, dtype=torch.bool),
            truncated=torch.zeros(num_envs, 1, dtype=torch.bool),
            infos={},
            timestep=t,
            timesteps=rollouts,
        )


# -- configuration -------------------------------------------------------------------------------------------------


def test_the_default_config_has_the_spec_keys_and_defaults_and_no_mixed_precision():
    # beside skrl 1.4's keys, the privileged states' preprocessor (skrl 2.x's state_preprocessor)
    assert [key for key in TRPO_DEFAULT_CONFIG if not key.startswith("privileged_state_preprocessor")] == SPEC_KEYS
    assert TRPO_DEFAULT_CONFIG["damping"] == 0.1
    assert TRPO_DEFAULT_CONFIG["max_kl_divergence"] == 0.01
    assert TRPO_DEFAULT_CONFIG["conjugate_gradient_steps"] == 10
    assert TRPO_DEFAULT_CONFIG["max_backtrack_steps"] == 10
    assert TRPO_DEFAULT_CONFIG["accept_ratio"] == 0.5
    assert TRPO_DEFAULT_CONFIG["step_fraction"] == 1.0
    assert TRPO_DEFAULT_CONFIG["value_learning_rate"] == 1e-3
    assert (TRPO_DEFAULT_CONFIG["rollouts"], TRPO_DEFAULT_CONFIG["learning_epochs"]) == (16, 8)


def test_checkpoint_modules_are_policy_value_and_value_optimizer():
    agent = make_trpo()
    assert set(agent.checkpoint_modules) == {"policy", "value", "value_optimizer"}
    assert isinstance(agent.value_optimizer, torch.optim.Adam)


# -- the pieces ----------------------------------------------------------------------------------------------------


def test_conjugate_gradient_solves_a_small_spd_system():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(6, 6))
    a = m @ m.T + 6 * np.eye(6)
    b = rng.normal(size=6)
    matrix = torch.tensor(a, dtype=torch.float64)
    x = conjugate_gradient(lambda v: matrix @ v, torch.tensor(b), iterations=6)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=1e-8, atol=1e-8)


def test_conjugate_gradient_stops_at_the_tolerance_without_dividing_by_zero():
    # the identity is solved in one step; later iterations would divide 0 by 0 if they ran
    x = conjugate_gradient(lambda v: v, torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64), iterations=5)
    np.testing.assert_allclose(x.numpy(), [1.0, -2.0, 3.0])


def test_gaussian_kl_is_the_textbook_kl_also_when_the_standard_deviation_changes():
    mean_1, log_std_1 = torch.tensor([[0.1, -0.3], [0.5, 0.0]]), torch.tensor([[-0.5, 0.2], [-0.5, 0.2]])
    mean_2, log_std_2 = torch.tensor([[0.3, -0.1], [0.2, 0.4]]), torch.tensor([[0.1, -0.1], [0.1, -0.1]])
    expected = kl_divergence(Normal(mean_1, log_std_1.exp()), Normal(mean_2, log_std_2.exp())).sum(-1).mean()
    assert float(gaussian_kl(mean_1, log_std_1, mean_2, log_std_2)) == pytest.approx(float(expected), rel=1e-6)
    # skrl 1.4.3's log sigma1 - log sigma2 would give a different number here
    skrl = log_std_1 - log_std_2 + (log_std_1.exp() ** 2 + (mean_1 - mean_2) ** 2) / (2 * log_std_2.exp() ** 2) - 0.5
    assert float(skrl.sum(-1).mean()) != pytest.approx(float(expected), rel=1e-2)


def _linear_trials(slope):
    """A surrogate rising linearly along the step (``slope`` of the expected rate) and no KL."""

    def evaluate(flat):
        return Trial(slope * flat.sum(), torch.zeros(()), flat.sum())

    return evaluate


def test_line_search_expects_each_fractions_own_share_of_the_improvement():
    # actual = 0.3 x expected at every fraction: below accept_ratio 0.5, so no trial is accepted (skrl 1.4.3's
    # cumulative product expects 1, 0.5, 0.125, ... and would accept the third trial: 0.3 * 0.25 / 0.125 = 0.6)
    start, step = torch.zeros(1), torch.ones(1)
    parameters, accepted, trial = line_search(
        _linear_trials(0.3), start, step, torch.tensor(1.0), Trial(torch.tensor(0.0), 0, torch.tensor(7.0)),
        0.01, 0.5, 1.0, 10,
    )  # fmt: skip
    assert not accepted and float(parameters) == 0.0 and float(trial.stddev) == 7.0
    # actual = 0.6 x expected: the first (full) step is accepted
    parameters, accepted, _ = line_search(
        _linear_trials(0.6), start, step, torch.tensor(1.0), Trial(torch.tensor(0.0), 0, torch.tensor(7.0)),
        0.01, 0.5, 1.0, 10,
    )  # fmt: skip
    assert accepted and float(parameters) == 1.0


def test_line_search_halves_the_step_until_the_kl_bound_holds():
    def evaluate(flat):  # KL = x^2: 1, 0.25, 0.0625, 0.015625, 0.0039 at fractions 1, 1/2, ...
        return Trial(flat.sum(), (flat**2).sum(), flat.sum())

    parameters, accepted, trial = line_search(
        evaluate, torch.zeros(1), torch.ones(1), torch.tensor(1.0), Trial(torch.tensor(0.0), 0, 0), 0.01, 0.5, 1.0, 10
    )
    assert accepted and float(parameters) == 0.0625 and float(trial.kl) == pytest.approx(0.0625**2)


# -- one policy step on a tiny hand-made problem -------------------------------------------------------------------


def _tiny_problem(seed=0, samples=64):
    rng = np.random.default_rng(seed)
    states = torch.tensor(rng.normal(size=(samples, 2)), dtype=torch.float32)
    # actions from a "better" policy mean of 0.8 s0 - 0.5 s1, with advantages favouring actions near it
    target = 0.8 * states[:, :1] - 0.5 * states[:, 1:]
    actions = target + 0.3 * torch.tensor(rng.normal(size=(samples, 1)), dtype=torch.float32)
    advantages = -torch.abs(actions - target)
    advantages = (advantages - advantages.mean()) / advantages.std()
    return states, actions, advantages


def _distribution(policy, states):
    """The policy's Normal computed from its weights (independent of the mixin)."""
    with torch.no_grad():
        mean = states @ policy.linear.weight.T + policy.linear.bias
        return Normal(mean, policy.log_std_parameter.exp().expand_as(mean))


@pytest.mark.parametrize("max_kl", [0.001, 0.01, 0.05])
def test_one_policy_step_stays_within_the_kl_bound_and_improves_the_surrogate(max_kl):
    torch.manual_seed(0)
    agent = make_trpo(max_kl_divergence=max_kl)
    states, actions, advantages = _tiny_problem()
    old = _distribution(agent.policy, states)
    old_log_prob = old.log_prob(actions).sum(-1, keepdim=True)

    surrogate_before, stddev = agent._policy_step(agent._model_inputs(states), actions, old_log_prob, advantages)

    new = _distribution(agent.policy, states)
    kl = kl_divergence(old, new).sum(-1).mean()
    surrogate = (advantages * torch.exp(new.log_prob(actions).sum(-1, keepdim=True) - old_log_prob)).mean()
    assert float(surrogate_before) == pytest.approx(float(advantages.mean()), abs=1e-6)  # ratio 1 at the start
    assert 0 < float(kl) < max_kl
    assert float(surrogate) > float(surrogate_before) + 1e-4
    # the quadratic model of the KL makes the accepted step close to the bound (a fraction 1/2^k of it)
    assert float(kl) > max_kl / 4**3
    assert float(stddev) == pytest.approx(float(new.stddev.mean()), rel=1e-6)


def test_the_line_search_restores_the_policy_when_no_trial_is_accepted():
    torch.manual_seed(0)
    agent = make_trpo(accept_ratio=1e9)  # no improvement is ever large enough
    states, actions, advantages = _tiny_problem()
    before = [parameter.detach().clone() for parameter in agent.policy.parameters()]
    old_log_prob = _distribution(agent.policy, states).log_prob(actions).sum(-1, keepdim=True)
    _, stddev = agent._policy_step(agent._model_inputs(states), actions, old_log_prob, advantages)
    for parameter, original in zip(agent.policy.parameters(), before):
        torch.testing.assert_close(parameter.detach(), original, rtol=0, atol=0)
    assert float(stddev) == pytest.approx(float(np.exp(-0.5)), rel=1e-6)


def test_a_policy_with_a_hidden_layer_also_satisfies_the_bound():
    torch.manual_seed(1)
    agent = make_trpo(policy=MlpPolicy(), max_kl_divergence=0.01)
    states, actions, advantages = _tiny_problem(seed=1)

    def distribution():
        with torch.no_grad():
            mean = agent.policy.linear(states)
            return Normal(mean, agent.policy.log_std_parameter.exp().expand_as(mean))

    old = distribution()
    old_log_prob = old.log_prob(actions).sum(-1, keepdim=True)
    surrogate_before, _ = agent._policy_step(agent._model_inputs(states), actions, old_log_prob, advantages)
    new = distribution()
    assert 0 < float(kl_divergence(old, new).sum(-1).mean()) < 0.01
    surrogate = (advantages * torch.exp(new.log_prob(actions).sum(-1, keepdim=True) - old_log_prob)).mean()
    assert float(surrogate) > float(surrogate_before)


# -- the whole update ----------------------------------------------------------------------------------------------


def test_an_update_tracks_skrls_names_and_fits_the_value_function():
    from skrl_like.torch.resources.schedulers import KLAdaptiveLR

    torch.manual_seed(0)
    agent = make_trpo(
        learning_epochs=4,
        mini_batches=2,
        value_learning_rate=1e-2,
        learning_rate_scheduler=torch.optim.lr_scheduler.StepLR,
        learning_rate_scheduler_kwargs={"step_size": 1, "gamma": 0.5},
    )
    assert KLAdaptiveLR is not None
    record_rollout(agent, np.random.default_rng(0))
    value_before = [parameter.detach().clone() for parameter in agent.value.parameters()]
    agent._update(timestep=7, timesteps=8)
    data = agent.tracking_data
    for tag in ("Loss / Policy loss", "Loss / Value loss", "Policy / Standard deviation"):
        assert len(data[tag]) == 1 and np.isfinite(float(data[tag][0]))
    assert "Loss / Entropy loss" not in data
    # the scheduler steps once per value epoch: 1e-2 * 0.5^4
    assert float(data["Learning / Value learning rate"][0]) == pytest.approx(1e-2 * 0.5**4)
    assert any(not torch.equal(a, b) for a, b in zip(agent.value.parameters(), value_before))


def test_the_policy_step_writes_into_the_parameters_own_storage():
    # vector_to_parameters rebinds each parameter to a view of the flat step vector; a matrix product on that view
    # may round differently from one on fresh storage, so a run restored from a checkpoint drifted by one ulp
    torch.manual_seed(0)
    agent = make_trpo()
    record_rollout(agent, np.random.default_rng(0))
    before = [(parameter.data_ptr(), parameter.detach().clone()) for parameter in agent.policy.parameters()]
    agent._update(timestep=7, timesteps=8)
    after = list(agent.policy.parameters())
    assert [parameter.data_ptr() for parameter in after] == [pointer for pointer, _ in before]
    assert any(not torch.equal(parameter, old) for parameter, (_, old) in zip(after, before))


def test_save_load_round_trip_restores_the_policy_value_and_optimizer(tmp_path):
    torch.manual_seed(0)
    first = make_trpo()
    record_rollout(first, np.random.default_rng(0))
    first._update(timestep=7, timesteps=8)
    path = str(tmp_path / "agent.pt")
    first.save(path)
    second = make_trpo()
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    for a, b in zip(first.policy.parameters(), second.policy.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    for a, b in zip(first.value.parameters(), second.value.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    first_state, second_state = first.value_optimizer.state_dict(), second.value_optimizer.state_dict()
    for index, state in first_state["state"].items():
        torch.testing.assert_close(state["exp_avg"], second_state["state"][index]["exp_avg"], rtol=0, atol=0)


def _short_run(seed):
    set_seed(seed)
    env = pendulum(2)
    env._env.reset(seed=seed)
    agent = make_trpo(rollouts=16, num_envs=2, observation_space=env.observation_space, action_space=env.action_space)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 48}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_reproduces_a_short_run():
    first, second = _short_run(3), _short_run(3)
    assert len(first) == 6 and first == second
    assert _short_run(4) != first


# -- bad input -----------------------------------------------------------------------------------------------------


class CategoricalPolicy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self)
        self.net = nn.Linear(self.num_observations, 3)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def test_a_non_gaussian_policy_is_rejected_with_the_fix():
    discrete = gymnasium.spaces.Discrete(3)
    with pytest.raises(ValueError, match="TRPO: the 'policy' model is a CategoricalPolicy, not a GaussianMixin"):
        make_trpo(policy=CategoricalPolicy(OBSERVATIONS, discrete), action_space=discrete)


class SharedModel(GaussianMixin, DeterministicMixin, Model):
    def __init__(self):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        GaussianMixin.__init__(self, role="policy")
        DeterministicMixin.__init__(self, role="value")
        self.net = nn.Linear(2, 1)
        self.log_std_parameter = nn.Parameter(torch.zeros(1))

    def compute(self, inputs, role):
        if role == "policy":
            return self.net(inputs["states"]), self.log_std_parameter, {}
        return self.net(inputs["states"]), {}


def test_a_value_model_shared_with_the_policy_is_rejected():
    model = SharedModel()
    with pytest.raises(ValueError, match="shared models are not supported: pass a separate value model"):
        TRPO(
            models={"policy": model, "value": model},
            memory=RandomMemory(memory_size=8, num_envs=2, device="cpu"),
            cfg={"rollouts": 8, "experiment": NO_FILES},
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
            device="cpu",
        )


def test_a_memory_size_other_than_rollouts_is_rejected_at_construction():
    with pytest.raises(ValueError, match=r"memory holds 8 steps but cfg\['rollouts'\] is 16.*memory_size="):
        TRPO(
            models={"policy": LinearPolicy(), "value": Value(OBSERVATIONS, ACTIONS)},
            memory=RandomMemory(memory_size=8, num_envs=2, device="cpu"),
            cfg={"rollouts": 16, "experiment": NO_FILES},
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
            device="cpu",
        )


def test_unknown_and_out_of_range_config_values_are_rejected():
    with pytest.raises(ValueError, match="Did you mean 'max_kl_divergence'"):
        make_trpo(max_kl_divergense=0.01)
    with pytest.raises(ValueError, match="max_kl_divergence"):
        make_trpo(max_kl_divergence=0.0)


def test_skrl_examples_learning_rate_key_is_ignored_with_a_warning(caplog):
    """skrl 1.4.3's published Pendulum TRPO script sets cfg["learning_rate"], which its TRPO never reads: the script
    runs here too, with a warning naming what to set instead, and the value learning rate keeps its value."""
    with caplog.at_level("WARNING", logger="skrl_like"):
        agent = make_trpo(learning_rate=0.5, value_learning_rate=2e-3)
    assert "'learning_rate'" in caplog.text and "value_learning_rate" in caplog.text
    assert "learning_rate" not in agent.cfg
    assert agent.value_optimizer.param_groups[0]["lr"] == 2e-3


def test_nan_rewards_stop_the_update_naming_them():
    agent = make_trpo()
    record_rollout(agent, np.random.default_rng(0))
    agent.memory.get_tensor_by_name("rewards")[3, 1] = float("nan")
    with pytest.raises(FloatingPointError, match="rollout's rewards contain NaN"):
        agent._update(timestep=7, timesteps=8)


# -- learning ------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_trpo_learns_pendulum():
    from examples import load_example

    make_agent = load_example("torch", "trpo_pendulum").make_agent
    set_seed(42)
    env = pendulum(4)
    env._env.reset(seed=42)
    agent = make_agent(env, rollouts=256, experiment=NO_FILES)  # more updates in a short run
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12000})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=8)
    # untrained policies score about -1200 (-1000..-1600)
    assert np.mean(returns) >= -800, returns


def test_a_value_step_that_overflows_is_named():
    agent = make_trpo(value_learning_rate=1e30)
    record_rollout(agent, np.random.default_rng(0))
    with pytest.raises(
        FloatingPointError,
        match=r"TRPO update .*the (value loss|parameters after the optimizer step) of mini-batch [01] \(epoch 0\)",
    ):
        agent._update(timestep=7, timesteps=8)
