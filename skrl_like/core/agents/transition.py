"""The one record of an interaction step, shared by every agent, memory and trainer of both backends.

A :class:`Transition` is built once, where the environment step happens (the base agent's ``record_transition``, or
the JAX ``CompiledTrainer``'s scan), and is read as it is by the memory (``memory.add_samples(**transition.fields())``)
and by the update. It is a ``NamedTuple``, so in JAX it is a pytree that ``lax.scan`` stacks and ``vmap`` maps;
it holds whatever array type the backend uses and never converts.

An algorithm that stores more than the six fields (AMP's observations and next values, a recurrent agent's hidden
states, a critic's privileged states) puts them in ``extras``: a dict of named arrays with the batch's leading shape,
stored beside the six under their own names.
"""

from typing import Any, Dict, Mapping, NamedTuple


class Transition(NamedTuple):
    """One step of every environment an agent acts in (leading dimension: ``num_envs``).

    :param states: the observations the agent acted on.
    :param actions: the actions it took.
    :param rewards: the rewards received (already shaped by ``cfg["rewards_shaper"]`` when the agent stores them).
    :param next_states: the observations after the step; where a sub-environment finished, its terminal observation
        (not the first observation of the next episode), so a truncated episode bootstraps from the state it reached.
    :param terminated: whether each episode ended in a terminal state.
    :param truncated: whether each episode was cut short (time limit).
    :param extras: further named arrays an algorithm stores beside these six.
    """

    states: Any
    actions: Any
    rewards: Any
    next_states: Any
    terminated: Any
    truncated: Any
    extras: Mapping[str, Any] = {}

    def fields(self) -> Dict[str, Any]:
        """Every stored array by its memory tensor name: the six fields, then the extras."""
        return {
            "states": self.states,
            "actions": self.actions,
            "rewards": self.rewards,
            "next_states": self.next_states,
            "terminated": self.terminated,
            "truncated": self.truncated,
            **self.extras,
        }

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> "Transition":
        """The transition of named arrays (the six by name, the others as extras): the inverse of :meth:`fields`."""
        extras = {name: value for name, value in fields.items() if name not in TRANSITION_NAMES}
        return cls(*(fields[name] for name in TRANSITION_NAMES), extras=extras)

    def with_extras(self, **extras: Any) -> "Transition":
        """This transition with more named arrays in ``extras`` (an algorithm extending what its base stores)."""
        return self._replace(extras={**self.extras, **extras})


#: the memory tensor names of the six fields every agent stores, in order
TRANSITION_NAMES = ("states", "actions", "rewards", "next_states", "terminated", "truncated")
