"""Same-step autoreset for gymnasium vector environments, whatever autoreset mode they were built with.

skrl's agents and trainers assume that when a step reports a sub-environment as terminated or truncated, the
observation returned for it is already the first observation of its next episode (gymnasium's ``SAME_STEP``
contract, the only one gymnasium had before 1.0). gymnasium >= 1.0 vector envs default to ``NEXT_STEP``: the
step *after* a done returns the reset observation with reward 0 and both flags false, ignoring the action. An
agent that saw that step would learn from a transition that crosses the episode boundary.

:class:`SameStepAutoreset` removes that step: right after a step that reports done sub-environments it resets
exactly those at once (``env.reset(options={"reset_mask": done})``, supported by gymnasium's ``SyncVectorEnv``
and ``AsyncVectorEnv`` and forwarded through vector wrappers), which also clears gymnasium's pending autoreset,
so the next step really steps them. Both backends' wrappers call it; it only touches NumPy.

Known gymnasium limitations (checked on 1.4): ``AsyncVectorEnv(shared_memory=False)`` keeps the pending autoreset
(rejected with a clear error); the vector ``NormalizeObservation`` refuses partial resets (the error says to use
``SAME_STEP``); the vector ``RecordEpisodeStatistics`` sees the mask already consumed by the inner env and zeroes the
statistics of *every* sub-environment on a partial reset (transitions stay correct, only its ``info["episode"]``
suffers): build such stacks with ``autoreset_mode=SAME_STEP`` or record statistics on the single envs.
"""

from typing import Any, Optional, Tuple

import numpy as np

NEXT_STEP = "next_step"
SAME_STEP = "same_step"
DISABLED = "disabled"


def get_autoreset_mode(env: Any) -> str:
    """Autoreset mode of a vector environment: ``"next_step"``, ``"same_step"`` or ``"disabled"``.

    :param env: a gymnasium vector environment (or a vector wrapper around one).

    gymnasium < 1.0 (no ``AutoresetMode``) always reset in the same step. A gymnasium >= 1.0 env that does not
    declare ``metadata["autoreset_mode"]`` is taken to use gymnasium's default, ``NEXT_STEP``.
    """
    import gymnasium

    mode_type = getattr(gymnasium.vector, "AutoresetMode", None)
    if mode_type is None:
        return SAME_STEP
    mode = (getattr(env, "metadata", None) or {}).get("autoreset_mode", mode_type.NEXT_STEP)
    return mode_type(mode).name.lower()  # accepts the enum or its value ("NextStep", ...)


class SameStepAutoreset:
    """Give any gymnasium vector environment same-step autoreset semantics.

    :param env: the vector environment the wrapper steps (the outermost one, so that vector observation/episode
        wrappers see the partial resets too).

    Call :meth:`__call__` with the results of every ``env.step``. It returns the observations the agent must act
    on next: for sub-environments that just finished, the first observation of their new episode. Rewards and
    flags of the step are left untouched (they belong to the finished episode). Cost on steps without a done:
    one ``np.logical_or`` into a preallocated mask and one ``any()``.

    ``NEXT_STEP`` and ``DISABLED`` envs are reset through ``reset_mask``; ``SAME_STEP`` envs already reset
    themselves and are passed through. The info returned by a partial reset is kept in
    :attr:`last_reset_info` (the step's own info, describing the finished episodes, is what the caller returns).
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.autoreset_mode = get_autoreset_mode(env)
        self.num_envs = int(env.num_envs)
        self.last_reset_info: Optional[dict] = None
        self._done = np.zeros((self.num_envs,), dtype=np.bool_)
        if self.autoreset_mode != SAME_STEP:
            self._reject_envs_without_partial_resets(env, self.autoreset_mode)

    @property
    def active(self) -> bool:
        """Whether the env needs this at all (``SAME_STEP`` envs reset themselves inside the terminal step)."""
        return self.autoreset_mode != SAME_STEP

    @staticmethod
    def _reject_envs_without_partial_resets(env: Any, mode: str) -> None:
        import gymnasium

        if getattr(gymnasium.vector, "AutoresetMode", None) is None:
            raise ValueError(
                f"gymnasium {gymnasium.__version__} vector envs autoreset on the next step and cannot reset single "
                "sub-environments: upgrade to gymnasium >= 1.1"
            )
        base = getattr(env, "unwrapped", env)
        # gymnasium's own vector envs honour options={"reset_mask": ...}; others (e.g. CartPoleVectorEnv, what
        # make_vec gives without vectorization_mode) may reset every sub-environment, silently cutting episodes
        if not isinstance(base, (gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv)):
            raise ValueError(
                f"{type(base).__name__} autoresets in {mode} mode and does not support resetting single "
                "sub-environments (options={'reset_mask': ...}), so the step after an episode end would be a bogus "
                "reset step: create it with gymnasium.make_vec(..., vectorization_mode='sync' or 'async') or with "
                "vector_kwargs={'autoreset_mode': gymnasium.vector.AutoresetMode.SAME_STEP}"
            )
        # gymnasium (checked on 1.4) clears a worker's pending autoreset on reset only when observations go
        # through shared memory; without it the step after our partial reset would still be a bogus reset step
        if mode == NEXT_STEP and isinstance(base, gymnasium.vector.AsyncVectorEnv) and not base.shared_memory:
            raise ValueError(
                "AsyncVectorEnv(shared_memory=False) with NEXT_STEP autoreset cannot be reset per sub-environment "
                "in gymnasium (its workers keep the pending autoreset), so transitions would cross episode "
                "boundaries: create it with shared_memory=True (the default) or with "
                "autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP"
            )

    def __call__(self, observations: Any, terminated: np.ndarray, truncated: np.ndarray, info: Any) -> Tuple[Any, Any]:
        """Observations to act on after a step (reset ones for the sub-environments that just finished), and info.

        :param observations: the batched observations ``env.step`` returned.
        :param terminated: its ``(num_envs,)`` termination flags.
        :param truncated: its ``(num_envs,)`` truncation flags.
        :param info: its info dict; after a partial reset it gains ``final_obs`` (an object array, the terminal
            observation of each finished sub-environment, ``None`` elsewhere) and the mask ``_final_obs``, as
            gymnasium reports them in same-step mode.
        """
        if self.autoreset_mode == SAME_STEP:
            return observations, info
        done = np.logical_or(terminated, truncated, out=self._done)
        if not done.any():
            return observations, info
        # copied before the reset: the env may reuse its observation buffer
        final_observations = np.full(self.num_envs, None, dtype=object)
        for index in np.nonzero(done)[0]:
            final_observations[index] = _select_row(observations, index)
        try:
            # sub-environments outside the mask keep their last observation, so the batch is complete
            observations, self.last_reset_info = self.env.reset(options={"reset_mask": done.copy()})
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"Could not reset the finished sub-environments of {self.env} with a reset mask ({error}); "
                "a vector wrapper in the stack probably does not support partial resets: build the vector env with "
                "autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP instead"
            ) from error
        info = dict(info) if isinstance(info, dict) else {}
        info["final_obs"] = final_observations
        info["_final_obs"] = done.copy()
        return observations, info


def _select_row(value: Any, index: int) -> Any:
    """Row ``index`` of a batched observation (NumPy array, or dict/tuple of them), copied."""
    if isinstance(value, dict):
        return {key: _select_row(item, index) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_select_row(item, index) for item in value)
    return np.array(value[index], copy=True)


def with_final_observations(observations: Any, info: Any) -> Optional[Any]:
    """The batched ``observations`` with the row of every sub-environment that finished at this step replaced by
    its terminal observation (``info["final_obs"]``), or ``None`` when none finished. What an off-policy agent
    stores as ``next_states`` (the observations themselves are left untouched: the agent acts on them)."""
    if not isinstance(info, dict) or "final_obs" not in info:
        return None
    mask = np.asarray(info.get("_final_obs", [item is not None for item in info["final_obs"]]), dtype=bool)
    rows = np.nonzero(mask)[0]
    if not rows.size:
        return None
    return _replace_rows(observations, rows, [info["final_obs"][row] for row in rows])


def _replace_rows(value: Any, rows: np.ndarray, replacements: list) -> Any:
    if isinstance(value, dict):
        return {key: _replace_rows(item, rows, [r[key] for r in replacements]) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_replace_rows(item, rows, [r[i] for r in replacements]) for i, item in enumerate(value))
    result = np.array(value, copy=True)
    result[rows] = np.stack([np.asarray(r, dtype=result.dtype) for r in replacements]).reshape(result[rows].shape)
    return result
