"""Hypothesis strategies shared by every property-based test: spaces, small random envs, agent configs, models.

Import from a test file as ``from strategies import ...`` (``tests/conftest.py`` puts ``tests/`` on ``sys.path``).
Everything here is backend-neutral at import time; the backend-specific builders (``wrap_random_env``,
``ppo_scheduler_and_preprocessors``, ``build_torch_ppo_models``, ``build_jax_ppo_models``) import their backend
when called. Sizes are computed here by hand from the gymnasium spaces (not with the code under test), so tests can
compare the shapes the library produces with them.

Typical use::

    @settings(derandomize=True, max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(setup=ppo_setups("torch"))
    def test_...(setup):
        env = wrap_random_env(setup.env, "torch")
        models = build_torch_ppo_models(setup.models, env.observation_space, env.action_space)
"""

import copy
import dataclasses
import functools
import math
from typing import Any, Optional

import gymnasium
import numpy as np
from gymnasium import spaces
from hypothesis import strategies as st

# -- sizes, computed by hand ---------------------------------------------------------------------------------


def one_hot_observation_size(space: gymnasium.Space) -> int:
    """Scalars an observation takes once its discrete parts are one-hot encoded (a model's input size): Box
    elements, ``n`` per Discrete, ``sum(nvec)`` per MultiDiscrete, composite spaces their children's sum."""
    if isinstance(space, spaces.Box):
        return int(np.prod(space.shape, dtype=np.int64))
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return int(np.sum(space.nvec))
    if isinstance(space, spaces.Dict):
        return sum(one_hot_observation_size(child) for child in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return sum(one_hot_observation_size(child) for child in space.spaces)
    raise TypeError(f"no hand-computed size for {space!r}")


def stored_observation_size(space: gymnasium.Space) -> int:
    """Columns of the flat observations wrappers give and memories store (skrl's occupied size): Box elements,
    1 per Discrete (the index), one per MultiDiscrete component, composite spaces their children's sum."""
    if isinstance(space, spaces.Box):
        return int(np.prod(space.shape, dtype=np.int64))
    if isinstance(space, spaces.Discrete):
        return 1
    if isinstance(space, spaces.MultiDiscrete):
        return int(np.prod(space.nvec.shape, dtype=np.int64))
    if isinstance(space, spaces.Dict):
        return sum(stored_observation_size(child) for child in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return sum(stored_observation_size(child) for child in space.spaces)
    raise TypeError(f"no hand-computed size for {space!r}")


def encode_observations(space: gymnasium.Space, states: Any, one_hot: Any, concatenate: Any) -> Any:
    """Flat observations as wrappers give them (``(batch, stored_observation_size)``: Box values, Discrete and
    MultiDiscrete indices, Dict children in sorted key order) to a float model input with the discrete parts one-hot
    encoded (``(batch, one_hot_observation_size)``), what skrl's ``one_hot_encoding`` does in a model.

    :param one_hot: ``one_hot(indices (batch,), n) -> (batch, n)`` float, of the backend.
    :param concatenate: ``concatenate(list of (batch, k)) -> (batch, sum k)``, of the backend.
    """
    parts = []

    def walk(space: gymnasium.Space, start: int) -> int:
        if isinstance(space, spaces.Box):
            size = int(np.prod(space.shape, dtype=np.int64))
            parts.append(states[:, start : start + size] * 1.0)
            return start + size
        if isinstance(space, spaces.Discrete):
            parts.append(one_hot(states[:, start], int(space.n)))
            return start + 1
        if isinstance(space, spaces.MultiDiscrete):
            for offset, n in enumerate(np.asarray(space.nvec).reshape(-1)):
                parts.append(one_hot(states[:, start + offset], int(n)))
            return start + int(np.prod(space.nvec.shape, dtype=np.int64))
        children = space.spaces
        keys = sorted(children.keys()) if isinstance(space, spaces.Dict) else range(len(children))
        for key in keys:
            start = walk(children[key], start)
        return start

    walk(space, 0)
    return concatenate(parts)


def stored_action_size(space: gymnasium.Space) -> int:
    """Scalars one action takes in a memory: 1 for Discrete (the index), one per MultiDiscrete component, Box
    elements."""
    if isinstance(space, spaces.Discrete):
        return 1
    if isinstance(space, spaces.MultiDiscrete):
        return int(np.prod(space.nvec.shape, dtype=np.int64))
    if isinstance(space, spaces.Box):
        return int(np.prod(space.shape, dtype=np.int64))
    raise TypeError(f"no hand-computed stored size for {space!r}")


def only_boxes(space: gymnasium.Space) -> bool:
    """Whether every leaf of ``space`` is a ``Box`` (no discrete indices among the observations)."""
    if isinstance(space, spaces.Dict):
        return all(only_boxes(child) for child in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return all(only_boxes(child) for child in space.spaces)
    return isinstance(space, spaces.Box)


def expected_updates(timesteps: int, rollouts: int, learning_starts: int) -> int:
    """How many on-policy updates a run of ``timesteps`` steps makes: one after every ``rollouts`` collected steps,
    at timestep ``t`` (0-based) where ``(t + 1) % rollouts == 0`` and ``t >= learning_starts`` (skrl's rule)."""
    return sum(1 for t in range(timesteps) if (t + 1) % rollouts == 0 and t >= learning_starts)


# -- spaces --------------------------------------------------------------------------------------------------

SMALL_SHAPES = st.one_of(
    st.tuples(st.integers(1, 4)),
    st.tuples(st.integers(1, 3), st.integers(1, 3)),
)


@st.composite
def box_spaces(draw: Any, infinite_bounds: bool = True, shapes: st.SearchStrategy = SMALL_SHAPES) -> spaces.Box:
    """A float32 ``Box`` of a small shape; with ``infinite_bounds`` its bounds may be infinite on either side
    (as observation spaces often are), otherwise finite with ``low < high``."""
    shape = draw(shapes)
    kind = draw(st.sampled_from(["finite", "infinite", "half"] if infinite_bounds else ["finite"]))
    if kind == "infinite":
        return spaces.Box(-np.inf, np.inf, shape, np.float32)
    low = draw(st.sampled_from([-1.0, -2.0, 0.0, -10.0]))
    width = draw(st.sampled_from([0.5, 1.0, 2.0, 20.0]))
    if kind == "half":
        return spaces.Box(low, np.inf, shape, np.float32)
    return spaces.Box(low, low + width, shape, np.float32)


def discrete_spaces(max_n: int = 5) -> st.SearchStrategy:
    """``Discrete(n)``, ``1 <= n <= max_n`` (a single-class space included)."""
    return st.integers(1, max_n).map(spaces.Discrete)


def multi_discrete_spaces(max_components: int = 3, max_n: int = 4) -> st.SearchStrategy:
    """A one-dimensional ``MultiDiscrete`` of 1 to ``max_components`` components of 1 to ``max_n`` classes (equal
    and unequal sizes)."""
    return st.lists(st.integers(1, max_n), min_size=1, max_size=max_components).map(
        lambda nvec: spaces.MultiDiscrete(np.array(nvec, dtype=np.int64))
    )


def leaf_observation_spaces() -> st.SearchStrategy:
    """Box (finite or infinite bounds), Discrete or MultiDiscrete."""
    return st.one_of(box_spaces(infinite_bounds=True), discrete_spaces(), multi_discrete_spaces())


def observation_spaces(max_leaves: int = 4) -> st.SearchStrategy:
    """A leaf space, or ``Dict`` / ``Tuple`` of them nested up to two levels."""

    def composites(children: st.SearchStrategy) -> st.SearchStrategy:
        as_tuple = st.lists(children, min_size=1, max_size=3).map(lambda items: spaces.Tuple(items))
        as_dict = st.dictionaries(st.sampled_from(["a", "b", "pos", "z"]), children, min_size=1, max_size=3).map(
            spaces.Dict
        )
        return st.one_of(as_tuple, as_dict)

    return st.recursive(leaf_observation_spaces(), composites, max_leaves=max_leaves)


PPO_ACTION_SPACES = {
    "Discrete": discrete_spaces(),
    "MultiDiscrete": multi_discrete_spaces(),
    "Box": box_spaces(infinite_bounds=False),
}


def ppo_action_spaces() -> st.SearchStrategy:
    """What PPO acts in: Discrete, MultiDiscrete, or a Box with finite bounds (``random_act`` samples within them)."""
    return st.one_of(discrete_spaces(), multi_discrete_spaces(), box_spaces(infinite_bounds=False))


# -- a small random env --------------------------------------------------------------------------------------


class RandomEnv(gymnasium.Env):
    """Random observations drawn from ``observation_space``, random rewards, terminations and truncations; all
    seeded. ``step`` checks the action it receives belongs to the action space (Box actions: shape and finiteness
    only, since an unclipped Gaussian policy may leave the bounds).

    :param observation_space: the space observations are sampled from (copied and seeded).
    :param action_space: the action space (copied and seeded).
    :param seed: seed of every random draw of this env.
    :param termination_probability: chance that a step terminates the episode.
    :param truncation_probability: chance that a step truncates the episode.
    :param reward_scale: standard deviation of the normal rewards.
    """

    metadata: dict = {"render_modes": []}

    def __init__(
        self,
        observation_space: gymnasium.Space,
        action_space: gymnasium.Space,
        seed: int = 0,
        termination_probability: float = 0.1,
        truncation_probability: float = 0.1,
        reward_scale: float = 1.0,
    ) -> None:
        self.observation_space = copy.deepcopy(observation_space)
        self.action_space = copy.deepcopy(action_space)
        self.observation_space.seed(seed)
        self.action_space.seed(seed)
        self._rng = np.random.default_rng(seed)
        self._termination_probability = termination_probability
        self._truncation_probability = truncation_probability
        self._reward_scale = reward_scale
        self.steps = 0

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple:
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
            self._rng = np.random.default_rng(seed)
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple:
        if isinstance(self.action_space, spaces.Box):
            action = np.asarray(action)
            assert action.shape == self.action_space.shape, f"action of shape {action.shape} for {self.action_space}"
            assert np.isfinite(action).all(), f"non-finite action {action}"
        else:
            assert self.action_space.contains(action), f"{action!r} is not in {self.action_space}"
        self.steps += 1
        reward = float(self._rng.normal() * self._reward_scale)
        terminated = bool(self._rng.random() < self._termination_probability)
        truncated = bool(self._rng.random() < self._truncation_probability)
        return self.observation_space.sample(), reward, terminated, truncated, {}


@dataclasses.dataclass(frozen=True)
class RandomEnvSpec:
    """What ``wrap_random_env`` builds: ``num_envs`` seeded ``RandomEnv`` in a ``SyncVectorEnv`` (or a single env
    when ``vectorized`` is false, ``num_envs`` then 1)."""

    observation_space: gymnasium.Space
    action_space: gymnasium.Space
    num_envs: int
    seed: int
    termination_probability: float
    truncation_probability: float
    reward_scale: float
    vectorized: bool
    autoreset_mode: str  # "SAME_STEP" or "NEXT_STEP" (gymnasium.vector.AutoresetMode members)

    def make(self) -> Any:
        """The unwrapped gymnasium env or vector env."""

        def make_one(index: int) -> RandomEnv:
            return RandomEnv(
                self.observation_space,
                self.action_space,
                seed=self.seed + index,
                termination_probability=self.termination_probability,
                truncation_probability=self.truncation_probability,
                reward_scale=self.reward_scale,
            )

        if not self.vectorized:
            return make_one(0)
        mode = gymnasium.vector.AutoresetMode[self.autoreset_mode]
        return gymnasium.vector.SyncVectorEnv(
            [functools.partial(make_one, index) for index in range(self.num_envs)], autoreset_mode=mode
        )


@st.composite
def random_env_specs(
    draw: Any,
    observation_spaces: st.SearchStrategy = observation_spaces(),
    action_spaces: st.SearchStrategy = ppo_action_spaces(),
    max_num_envs: int = 3,
) -> RandomEnvSpec:
    """A ``RandomEnvSpec``: spaces from the given strategies, 1 to ``max_num_envs`` envs (a single unvectorised
    env sometimes), episode-end probabilities from 0 to 1 with the ends, reward scales from 0 (constant rewards)."""
    num_envs = draw(st.integers(1, max_num_envs))
    vectorized = num_envs > 1 or draw(st.booleans())
    probability = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 0.5))
    return RandomEnvSpec(
        observation_space=draw(observation_spaces),
        action_space=draw(action_spaces),
        num_envs=num_envs,
        seed=draw(st.integers(0, 2**16)),
        termination_probability=draw(probability),
        truncation_probability=draw(probability),
        reward_scale=draw(st.sampled_from([0.0, 1.0, 10.0])),
        vectorized=vectorized,
        autoreset_mode=draw(st.sampled_from(["SAME_STEP", "NEXT_STEP"])),
    )


def wrap_random_env(spec: RandomEnvSpec, backend: str) -> Any:
    """``spec.make()`` wrapped with the backend's ``wrap_env`` (``backend``: ``"torch"`` or ``"jax"``)."""
    if backend == "torch":
        from skrl_like.torch.envs.wrappers import wrap_env
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
    return wrap_env(spec.make(), verbose=False)


# -- agent configs -------------------------------------------------------------------------------------------

UNIT_INTERVAL = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0))  # discount factor, lambda
LEARNING_RATES = st.one_of(st.sampled_from([0.0, 1e-10, 1e-3]), st.floats(1e-10, 1e-2))
CLIPS = st.one_of(st.just(0.0), st.floats(0.0, 1.0))  # grad_norm_clip, ratio_clip, value_clip
SCALES = st.one_of(st.just(0.0), st.floats(0.0, 2.0))  # value_loss_scale, entropy_loss_scale


def scale_rewards(rewards: Any, timestep: int, timesteps: int) -> Any:
    """A rewards shaper (skrl's signature): halves the rewards."""
    return rewards * 0.5


@st.composite
def ppo_configs(draw: Any, num_envs: int, observation_space: gymnasium.Space, action_space: gymnasium.Space) -> dict:
    """A PPO config with every documented key drawn across its range, edges included. Scheduler and preprocessor
    entries are the markers ``"KLAdaptiveLR"`` / ``"RunningStandardScaler"`` (or ``None``): resolve them for a
    backend with ``ppo_scheduler_and_preprocessors``. ``random_timesteps`` stays 0 for ``MultiDiscrete`` actions,
    whose ``random_act`` is not implemented (as in skrl); a state preprocessor is drawn only for all-``Box``
    observations (standardising indices is meaningless), and scalers only where their batches have two rows."""
    rollouts = draw(st.integers(1, 6))
    mini_batches = draw(st.integers(1, rollouts * num_envs))
    # RunningStandardScaler turns a one-row batch into NaN statistics (unbiased variance, as skrl): scalers only
    # where every batch they learn from (each step's states, each mini-batch's states, the rollout's returns) has
    # two rows or more
    state_rows = min(num_envs, rollouts * num_envs // mini_batches)
    if not only_boxes(observation_space):  # standardised indices can no longer be one-hot encoded by the model
        state_rows = 0
    scalers = [None, "RunningStandardScaler"]
    cfg = {
        "rollouts": rollouts,
        "learning_epochs": draw(st.integers(1, 3)),
        "mini_batches": mini_batches,
        "discount_factor": draw(UNIT_INTERVAL),
        "lambda": draw(UNIT_INTERVAL),
        "learning_rate": draw(LEARNING_RATES),
        "learning_rate_scheduler": draw(st.sampled_from([None, "KLAdaptiveLR"])),
        "learning_rate_scheduler_kwargs": {},
        "state_preprocessor": draw(st.sampled_from(scalers if state_rows >= 2 else [None])),
        "state_preprocessor_kwargs": {},
        "value_preprocessor": draw(st.sampled_from(scalers if rollouts * num_envs >= 2 else [None])),
        "value_preprocessor_kwargs": {},
        "random_timesteps": 0,
        "learning_starts": draw(st.integers(0, rollouts)),
        "grad_norm_clip": draw(CLIPS),
        "ratio_clip": draw(CLIPS),
        "value_clip": draw(CLIPS),
        "clip_predicted_values": draw(st.booleans()),
        "entropy_loss_scale": draw(SCALES),
        "value_loss_scale": draw(SCALES),
        "kl_threshold": draw(st.one_of(st.just(0.0), st.floats(1e-4, 0.1))),
        "rewards_shaper": draw(st.sampled_from([None, scale_rewards])),
        "time_limit_bootstrap": draw(st.booleans()),
    }
    if cfg["learning_rate_scheduler"]:
        cfg["learning_rate_scheduler_kwargs"] = {"kl_threshold": draw(st.sampled_from([1e-20, 0.008, 1.0]))}
    if not isinstance(action_space, spaces.MultiDiscrete):
        cfg["random_timesteps"] = draw(st.integers(0, 2 * rollouts))
    return cfg


def ppo_scheduler_and_preprocessors(cfg: dict, backend: str, observation_space: gymnasium.Space) -> dict:
    """``cfg`` with its ``"KLAdaptiveLR"`` / ``"RunningStandardScaler"`` markers replaced by the backend's classes
    (and the scalers' ``size``)."""
    if backend == "torch":
        from skrl_like.torch.resources.preprocessors import RunningStandardScaler
        from skrl_like.torch.resources.schedulers import KLAdaptiveLR
    else:
        from skrl_like.jax.resources.preprocessors import RunningStandardScaler
        from skrl_like.jax.resources.schedulers import KLAdaptiveLR
    cfg = dict(cfg)
    if cfg["learning_rate_scheduler"] == "KLAdaptiveLR":
        cfg["learning_rate_scheduler"] = KLAdaptiveLR
    if cfg["state_preprocessor"] == "RunningStandardScaler":
        cfg["state_preprocessor"] = RunningStandardScaler
        cfg["state_preprocessor_kwargs"] = {"size": observation_space}
    if cfg["value_preprocessor"] == "RunningStandardScaler":
        cfg["value_preprocessor"] = RunningStandardScaler
        cfg["value_preprocessor_kwargs"] = {"size": 1}
    return cfg


# -- models --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PPOModelSpec:
    """Which PPO models to build: the policy mixin's name and keyword arguments, and whether one shared model
    serves as policy and value (torch only)."""

    policy_mixin: str
    mixin_kwargs: tuple  # ((name, value), ...) so the spec stays hashable and prints compactly
    shared: bool


@st.composite
def ppo_model_specs(draw: Any, backend: str, action_space: gymnasium.Space) -> PPOModelSpec:
    """Every policy mixin that fits ``action_space`` (Categorical for Discrete, MultiCategorical for MultiDiscrete,
    Gaussian and, in torch, MultivariateGaussian for Box), with its options; shared models in torch."""
    if isinstance(action_space, spaces.Discrete):
        mixin, kwargs = "CategoricalMixin", {"unnormalized_log_prob": draw(st.booleans())}
    elif isinstance(action_space, spaces.MultiDiscrete):
        kwargs = {"unnormalized_log_prob": draw(st.booleans()), "reduction": draw(st.sampled_from(["sum", "mean"]))}
        mixin = "MultiCategoricalMixin"
    else:
        mixins = ["GaussianMixin", "MultivariateGaussianMixin"] if backend == "torch" else ["GaussianMixin"]
        mixin = draw(st.sampled_from(mixins))
        kwargs = {"clip_actions": draw(st.booleans()), "clip_log_std": draw(st.booleans())}
        if mixin == "GaussianMixin":
            kwargs["reduction"] = draw(st.sampled_from(["sum", "mean"]))
    shared = backend == "torch" and draw(st.booleans())
    return PPOModelSpec(mixin, tuple(sorted(kwargs.items())), shared)


def _categorical_output(logits: Any, unnormalized_log_prob: bool, sizes: Optional[list], softmax: Any) -> Any:
    """Logits, or probabilities (a softmax per component) when the mixin expects probabilities."""
    if unnormalized_log_prob:
        return logits
    if sizes is None:
        return softmax(logits)
    parts, start = [], 0
    for size in sizes:
        parts.append(softmax(logits[..., start : start + size]))
        start += size
    return parts


def build_torch_ppo_models(spec: PPOModelSpec, observation_space: Any, action_space: Any, hidden: int = 8) -> dict:
    """``{"policy": ..., "value": ...}`` torch models (small tanh MLPs) as ``spec`` says, on the CPU."""
    import torch
    import torch.nn as nn

    import skrl_like.torch.models as models

    policy_mixin = getattr(models, spec.policy_mixin)
    kwargs = dict(spec.mixin_kwargs)
    gaussian = "Gaussian" in spec.policy_mixin
    sizes = [int(n) for n in action_space.nvec] if isinstance(action_space, spaces.MultiDiscrete) else None

    def encode(states: Any) -> Any:
        return encode_observations(
            observation_space,
            states,
            lambda indices, n: torch.nn.functional.one_hot(indices.long(), n).float(),
            lambda parts: torch.cat(parts, -1),
        )

    def policy_output(model: Any, hidden_output: Any) -> tuple:
        output = model.policy_head(hidden_output)
        if gaussian:
            return output, model.log_std, {}
        output = _categorical_output(output, kwargs["unnormalized_log_prob"], sizes, lambda x: torch.softmax(x, -1))
        return (torch.cat(output, -1) if isinstance(output, list) else output), {}

    def init(model: Any, roles: str) -> None:
        models.Model.__init__(model, observation_space, action_space, "cpu")
        model.body = nn.Sequential(nn.Linear(one_hot_observation_size(observation_space), hidden), nn.Tanh())
        if "policy" in roles:
            policy_mixin.__init__(model, role="policy", **kwargs)
            model.policy_head = nn.Linear(hidden, model.num_actions)
            if gaussian:
                model.log_std = nn.Parameter(torch.zeros(model.num_actions))
        if "value" in roles:
            models.DeterministicMixin.__init__(model, role="value")
            model.value_head = nn.Linear(hidden, 1)

    if spec.shared:

        class SharedModel(policy_mixin, models.DeterministicMixin, models.Model):
            def __init__(self) -> None:
                init(self, ("policy", "value"))

            def act(self, inputs: Any, role: str = "") -> Any:
                mixin = policy_mixin if role == "policy" else models.DeterministicMixin
                return mixin.act(self, inputs, role)

            def compute(self, inputs: Any, role: str = "") -> tuple:
                hidden_output = self.body(encode(inputs["states"]))
                if role == "policy":
                    return policy_output(self, hidden_output)
                return self.value_head(hidden_output), {}

        shared = SharedModel()
        return {"policy": shared, "value": shared}

    class Policy(policy_mixin, models.Model):
        def __init__(self) -> None:
            init(self, ("policy",))

        def compute(self, inputs: Any, role: str = "") -> tuple:
            return policy_output(self, self.body(encode(inputs["states"])))

    class Value(models.DeterministicMixin, models.Model):
        def __init__(self) -> None:
            init(self, ("value",))

        def compute(self, inputs: Any, role: str = "") -> tuple:
            return self.value_head(self.body(encode(inputs["states"]))), {}

    return {"policy": Policy(), "value": Value()}


def build_jax_ppo_models(spec: PPOModelSpec, observation_space: Any, action_space: Any, hidden: int = 8) -> dict:
    """``{"policy": ..., "value": ...}`` flax models (small tanh MLPs) as ``spec`` says, parameters initialised."""
    assert not spec.shared, "shared models are torch-only in these strategies"
    return _jax_ppo_models(spec.policy_mixin, spec.mixin_kwargs, observation_space, action_space, hidden)


def _jax_ppo_models(policy_mixin_name: str, mixin_items: tuple, observation_space: Any, action_space: Any, hidden: int):
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    import skrl_like.jax.models as models

    policy_mixin = getattr(models, policy_mixin_name)
    mixin_kwargs = dict(mixin_items)
    gaussian = policy_mixin_name == "GaussianMixin"
    sizes = [int(n) for n in action_space.nvec] if isinstance(action_space, spaces.MultiDiscrete) else None

    def encode(states: Any) -> Any:
        return encode_observations(
            observation_space,
            states,
            lambda indices, n: jax.nn.one_hot(indices.astype(jnp.int32), n),
            lambda parts: jnp.concatenate(parts, -1),
        )

    class Policy(policy_mixin, models.Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            models.Model.__init__(self, observation_space, action_space, device, **kwargs)
            policy_mixin.__init__(self, **mixin_kwargs)

        @nn.compact
        def __call__(self, inputs, role):
            output = nn.Dense(self.num_actions)(nn.tanh(nn.Dense(hidden)(encode(inputs["states"]))))
            if gaussian:
                return output, self.param("log_std", lambda _: jnp.zeros(self.num_actions)), {}
            unnormalized = mixin_kwargs["unnormalized_log_prob"]
            output = _categorical_output(output, unnormalized, sizes, lambda x: jax.nn.softmax(x, -1))
            return (jnp.concatenate(output, -1) if isinstance(output, list) else output), {}

    class Value(models.DeterministicMixin, models.Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            models.Model.__init__(self, observation_space, action_space, device, **kwargs)
            models.DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return nn.Dense(1)(nn.tanh(nn.Dense(hidden)(encode(inputs["states"])))), {}

    built = {"policy": Policy(observation_space, action_space), "value": Value(observation_space, action_space)}
    for role, model in built.items():
        model.init_state_dict(role)
    return built


# -- everything one PPO property test needs --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PPOSetup:
    """One drawn PPO experiment: the env, the config (with markers; see ``ppo_configs``) and the models."""

    env: RandomEnvSpec
    cfg: dict
    models: PPOModelSpec
    updates: int  # rollouts to train for after learning_starts


@st.composite
def ppo_setups(
    draw: Any, backend: str, action_spaces: st.SearchStrategy = ppo_action_spaces(), max_updates: int = 2
) -> PPOSetup:
    """A random env (actions from ``action_spaces``), a PPO config that fits it and models that fit its actions."""
    env = draw(random_env_specs(action_spaces=action_spaces))
    return PPOSetup(
        env=env,
        cfg=draw(ppo_configs(env.num_envs, env.observation_space, env.action_space)),
        models=draw(ppo_model_specs(backend, env.action_space)),
        updates=draw(st.integers(1, max_updates)),
    )


def ppo_timesteps(setup: PPOSetup) -> int:
    """Enough timesteps for ``setup.updates`` updates after ``learning_starts``."""
    rollouts = setup.cfg["rollouts"]
    return rollouts * (math.ceil((setup.cfg["learning_starts"] + 1) / rollouts) + setup.updates - 1)


# -- recurrent agents ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RecurrentSetup:
    """A recurrent agent's drawn sizes and episode ends (tests/torch/test_recurrent_properties.py)."""

    num_envs: int
    sequence_length: int
    sequences: int  # sequences per environment: a rollout (on-policy) or the memory (replay) holds this many
    mini_batches: int  # divides num_envs * sequences (on-policy); replay: batch_size is drawn from it
    kind: str  # "RNN", "GRU" or "LSTM"
    hidden: int
    recurrent_value: bool  # on-policy: a recurrent value model of its own beside the policy
    seed: int  # observations, rewards and episode ends
    end_probability: float  # per step and environment, for terminated and for truncated

    @property
    def steps(self) -> int:
        return self.sequence_length * self.sequences

    def episode_ends(self, steps: int) -> tuple:
        """``(terminated, truncated)``, each ``(steps, num_envs)`` bool."""
        rng = np.random.default_rng(self.seed + 1)
        shape = (steps, self.num_envs)
        return rng.random(shape) < self.end_probability, rng.random(shape) < self.end_probability


@st.composite
def recurrent_setups(draw: Any, max_envs: int = 3, max_length: int = 4, max_sequences: int = 3) -> RecurrentSetup:
    num_envs = draw(st.integers(1, max_envs))
    sequences = draw(st.integers(1, max_sequences))
    total = num_envs * sequences
    return RecurrentSetup(
        num_envs=num_envs,
        sequence_length=draw(st.integers(1, max_length)),
        sequences=sequences,
        mini_batches=draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0])),
        kind=draw(st.sampled_from(["RNN", "GRU", "LSTM"])),
        hidden=draw(st.integers(1, 3)),
        recurrent_value=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16 - 1)),
        end_probability=draw(st.sampled_from([0.0, 0.2, 0.5])),
    )
