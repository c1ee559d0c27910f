"""The models of the backend-agreement tests (tests/test_*_backends_agree.py): each torch model has a flax twin with
the same layers, and ``flax_params`` copies a torch model's weights into its twin, so that one update from the same
weights can be compared number for number."""

import flax.linen as fnn
import gymnasium
import jax.numpy as jnp
import numpy as np
import torch
import torch.nn as tnn

from skrl_like.jax.models import CategoricalMixin as JaxCategorical
from skrl_like.jax.models import DeterministicMixin as JaxDeterministic
from skrl_like.jax.models import Model as JaxModel
from skrl_like.torch.models import CategoricalMixin as TorchCategorical
from skrl_like.torch.models import DeterministicMixin as TorchDeterministic
from skrl_like.torch.models import Model as TorchModel

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (4,))
ACTIONS = gymnasium.spaces.Discrete(3)
HIDDEN = 16


class TorchPolicy(TorchCategorical, TorchModel):
    """A categorical policy: logits from one Tanh layer of ``HIDDEN`` units (the twin of ``JaxPolicy``)."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS):
        TorchModel.__init__(self, observation_space, action_space, "cpu")
        TorchCategorical.__init__(self)
        self.net = tnn.Sequential(
            tnn.Linear(self.num_observations, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, self.num_actions)
        )

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class TorchValue(TorchDeterministic, TorchModel):
    """A state value: one output from one Tanh layer of ``HIDDEN`` units (the twin of ``JaxValue``)."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS):
        TorchModel.__init__(self, observation_space, action_space, "cpu")
        TorchDeterministic.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(self.num_observations, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 1))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class JaxPolicy(JaxCategorical, JaxModel):
    """``TorchPolicy`` in flax, its layers named ``hidden`` and ``output`` for ``flax_params``."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxCategorical.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        hidden = fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))
        return fnn.Dense(self.num_actions, name="output")(hidden), {}


class JaxValue(JaxDeterministic, JaxModel):
    """``TorchValue`` in flax, its layers named ``hidden`` and ``output`` for ``flax_params``."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(1, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))), {}


class TorchCritic(TorchDeterministic, TorchModel):
    """A Q-function: one output from one Tanh layer of ``HIDDEN`` units on the concatenated states and actions (the
    twin of ``JaxCritic``)."""

    def __init__(self, observation_space, action_space):
        TorchModel.__init__(self, observation_space, action_space, "cpu")
        TorchDeterministic.__init__(self)
        size = self.num_observations + self.num_actions
        self.net = tnn.Sequential(tnn.Linear(size, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 1))

    def compute(self, inputs, role):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], -1)), {}


class JaxCritic(JaxDeterministic, JaxModel):
    """``TorchCritic`` in flax, its layers named ``hidden`` and ``output`` for ``flax_params``."""

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)
        return fnn.Dense(1, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(x))), {}


def flax_params(torch_model, log_std_name="log_std_parameter"):
    """The flax parameters of a torch model whose ``net`` is (hidden Linear, activation, output Linear): layers
    ``hidden`` and ``output`` (kernels transposed), plus its ``log_std_parameter`` under ``log_std_name`` if it has
    one."""

    def as_dense(layer):
        return {
            "kernel": jnp.asarray(layer.weight.detach().numpy().T),
            "bias": jnp.asarray(layer.bias.detach().numpy()),
        }

    params = {"hidden": as_dense(torch_model.net[0]), "output": as_dense(torch_model.net[2])}
    if hasattr(torch_model, "log_std_parameter"):
        params[log_std_name] = jnp.asarray(torch_model.log_std_parameter.detach().numpy())
    return {"params": params}


def load_torch_weights(jax_model, role, torch_model, log_std_name="log_std_parameter"):
    """Initialise ``jax_model``'s state dict for ``role`` and give it ``torch_model``'s weights (``flax_params``);
    returns ``jax_model``."""
    jax_model.init_state_dict(role)
    jax_model.state_dict = jax_model.state_dict.replace(params=flax_params(torch_model, log_std_name))
    return jax_model


def record_rollout_and_update(
    agent, to_array, states, actions, rewards, terminated, truncated, last_states, privileged_states=None
):
    """Record a hand-made rollout (arrays of shape (rollouts, num_envs, ...)) through ``record_transition``, the next
    states of the last step being ``last_states``, then run the agent's update once. ``privileged_states`` (shape
    ``(rollouts + 1, num_envs, size)``): the env's states before and after each step, handed in ``infos`` as the
    trainers do for an asymmetric critic."""
    rollouts = len(states)
    agent.init(trainer_cfg={"timesteps": rollouts})
    for t in range(rollouts):
        agent.record_transition(
            states=to_array(states[t]),
            actions=to_array(actions[t]),
            rewards=to_array(rewards[t]),
            next_states=to_array(states[t + 1] if t + 1 < rollouts else last_states),
            terminated=to_array(terminated[t]),
            truncated=to_array(truncated[t]),
            infos={}
            if privileged_states is None
            else {
                "privileged_states": to_array(privileged_states[t]),
                "next_privileged_states": to_array(privileged_states[t + 1]),
            },
            timestep=t,
            timesteps=rollouts,
        )
    agent._update(timestep=rollouts - 1, timesteps=rollouts)
