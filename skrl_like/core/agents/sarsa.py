"""SARSA's configuration, written once (skrl has SARSA in torch only): the same keys and defaults as Q-learning's,
in a dict of its own (editing one never changes the other)."""

from skrl_like.core.agents.tabular import default_config

SARSA_DEFAULT_CONFIG = default_config()
