"""The Runner configuration of the off-policy ``_RNN`` agents' tests (both backends): an Isaac Lab 3.0-style GRU fed by
an MLP in the policy, feedforward critics."""

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}


def runner_cfg(agent_class: str) -> dict:
    """``agent.class: SAC`` or ``DDPG`` with a recurrent policy (the Runner builds the ``_RNN`` form)."""
    trunk = [
        {"name": "mlp", "input": "OBSERVATIONS", "layers": [8], "activations": "elu"},
        {"name": "rnn", "input": "mlp", "type": "GRU", "layers": [8], "sequence_length": 4},
    ]
    critic = [{"name": "net", "input": "concatenate([OBSERVATIONS, ACTIONS])", "layers": [8], "activations": "elu"}]
    policy = {"class": "GaussianMixin" if agent_class == "SAC" else "DeterministicMixin", "network": trunk}
    models = {"separate": True, "policy": {**policy, "output": "ACTIONS"}}
    critics = ("critic_1", "critic_2", "target_critic_1", "target_critic_2") if agent_class == "SAC" else ("critic",)
    if agent_class == "DDPG":
        models["target_policy"] = models["policy"]
        critics += ("target_critic",)
    models.update({role: {"class": "DeterministicMixin", "network": critic, "output": "ONE"} for role in critics})
    return {
        "seed": 1,
        "models": models,
        "memory": {"class": "RandomMemory", "memory_size": 64},
        "agent": {"class": agent_class, "batch_size": 4, "learning_starts": 8, "experiment": NO_FILES},
        "trainer": {"class": "SequentialTrainer", "timesteps": 16, "headless": True, "disable_progressbar": True},
    }
