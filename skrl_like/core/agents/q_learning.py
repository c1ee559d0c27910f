"""Q-learning's configuration, written once (skrl has Q-learning in torch only): the tabular keys of
:func:`skrl_like.core.agents.tabular.default_config`."""

from skrl_like.core.agents.tabular import default_config

Q_LEARNING_DEFAULT_CONFIG = default_config()
