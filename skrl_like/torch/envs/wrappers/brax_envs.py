"""``BraxWrapper`` and ``PlaygroundWrapper`` for torch agents: Brax and MuJoCo Playground environments stepped in JAX,
their arrays handed to torch by DLPack.

The batching, episode length, action repeat and autoreset are the JAX backend's
(:mod:`skrl_like.jax.envs.wrappers.brax_envs`): this wrapper jits the same pure ``initial_state`` and ``transition``
and only converts. The conversions share memory (no host copy) where JAX and torch run on the same kind of device:
JAX on a GPU and torch on CUDA, or both on the CPU.
"""

from typing import Any, Optional, Tuple

import gymnasium
import torch
import torch.utils.dlpack

from skrl_like.core.seeding import get_seed
from skrl_like.torch.envs.wrappers.base import Wrapper


def _import_jax() -> Tuple[Any, Any]:
    """``(jax, skrl_like.jax.envs.wrappers.brax_envs)``, imported when a wrapper is made (the torch backend works
    without jax, and importing it costs a second)."""
    try:
        import jax
        import jax.dlpack

        from skrl_like.jax.envs.wrappers import brax_envs
    except ImportError as error:
        raise ImportError(
            "The Brax and Playground wrappers step the environment in JAX: install jax beside torch "
            "(pip install 'skrl_like[jax]', and 'skrl_like[brax]' or 'skrl_like[playground]' for the simulator)"
        ) from error
    return jax, brax_envs


class BraxWrapper(Wrapper):
    """Wrap a Brax environment for torch agents: :class:`skrl_like.jax.envs.wrappers.BraxWrapper`'s behaviour and
    arguments, with torch tensors on :attr:`device` (CUDA when JAX runs on a GPU, else the CPU) in and out;
    terminated/truncated are bool, as in the other torch wrappers.

    :param env: the unbatched environment (``brax.envs.get_environment("ant")``).
    :param num_envs: number of sub-environments (``None``: the env's ``num_envs`` attribute, else 1).
    :param episode_length: env steps after which an episode is truncated (``None``: the env's attribute, else 1000).
    :param action_repeat: env steps per agent step (``None``: the env's attribute, else 1).
    :param full_reset: restart finished sub-environments from a fresh reset instead of their first state.
    :param seed: the seed of the first :meth:`reset` (``None``: the last :func:`skrl_like.utils.set_seed`'s, or 0).
    """

    _jax_wrapper_name = "BraxWrapper"

    def __init__(
        self,
        env: Any,
        num_envs: Optional[int] = None,
        episode_length: Optional[int] = None,
        action_repeat: Optional[int] = None,
        full_reset: Optional[bool] = None,
        seed: Optional[int] = None,
    ) -> None:
        self._jax, jax_brax_envs = _import_jax()
        jax_wrapper = getattr(jax_brax_envs, self._jax_wrapper_name)
        self._jax_env = jax_wrapper(env, num_envs, episode_length, action_repeat, full_reset, seed)
        self._seed = seed
        super().__init__(env)
        self._initial_state_fn = self._jax.jit(self._jax_env.initial_state)
        self._transition_fn = self._jax.jit(self._jax_env.transition)
        self._carry: Any = None
        self._observations: Optional[torch.Tensor] = None

    def _parse_device(self, unwrapped: Any) -> torch.device:
        # where JAX keeps the env's arrays: DLPack shares memory only within one device kind
        jax_device = self._jax_env.device
        return torch.device(f"cuda:{jax_device.id}" if jax_device.platform == "gpu" else "cpu")

    @property
    def num_envs(self) -> int:
        return self._jax_env.num_envs

    @property
    def observation_space(self) -> gymnasium.Space:
        return self._jax_env.observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        return self._jax_env.action_space

    @property
    def state_space(self) -> Optional[gymnasium.Space]:
        return self._jax_env.state_space

    def _to_torch(self, array: Any) -> torch.Tensor:
        return torch.utils.dlpack.from_dlpack(array)

    def reset(self) -> Tuple[torch.Tensor, Any]:
        """Reset every sub-environment on the first call; later calls return the current observations (the
        sub-environments reset themselves inside :meth:`step`).

        :return: ``(observations (num_envs, size), info)``.
        """
        if self._carry is None:
            jax = self._jax
            seed = self._seed if self._seed is not None else get_seed()
            key = jax.device_put(jax.random.PRNGKey(0 if seed is None else seed), self._jax_env.device)
            self._carry, observations = self._initial_state_fn(key)
            self._observations = self._to_torch(observations)
        return self._observations, {}

    def step(self, actions: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, Any]:
        """Step every sub-environment (one compiled JAX call): ``(next_states, rewards, terminated, truncated,
        info)`` with ``info["final_states"]`` the observations reached before the autoreset."""
        if self._carry is None:
            self.reset()
        actions = actions.detach().to(device=self.device, dtype=torch.float32).contiguous()
        self._carry, outputs = self._transition_fn(self._carry, self._jax.dlpack.from_dlpack(actions))
        self._observations = self._to_torch(outputs.next_states)
        return (
            self._observations,
            self._to_torch(outputs.rewards),
            self._to_torch(outputs.terminated).bool(),
            self._to_torch(outputs.truncated).bool(),
            {"final_states": self._to_torch(outputs.final_states)},
        )

    def state(self) -> Optional[torch.Tensor]:
        """The privileged observations of the running sub-environments (``None`` if the env has none)."""
        if self._carry is None or self.state_space is None:
            return None
        return self._to_torch(self._jax_env.privileged_states(self._carry))

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Batched simulators are not rendered here: nothing is drawn."""
        return None

    def close(self) -> None:
        """Nothing to release: the environment is a pair of pure functions."""


class PlaygroundWrapper(BraxWrapper):
    """Wrap a MuJoCo Playground environment for torch agents: :class:`BraxWrapper`'s behaviour and arguments; a dict
    observation gives ``"state"`` to the agent and ``"privileged_state"`` to :meth:`state`."""

    _jax_wrapper_name = "PlaygroundWrapper"


__all__ = ["BraxWrapper", "PlaygroundWrapper"]
