"""What tests/torch/test_loop_on_device.py and tests/jax/test_loop_on_device.py share: the run's intervals, which of its
steps read the host, the Isaac Lab stand-in (with discrete actions for DQN), and PPO, A2C, SAC or DQN built with tiny
models on it, from the classes of a backend (``"torch"`` or ``"jax"``, imported only when asked for)."""

import copy
import importlib
import types

WRITE_INTERVAL, CHECKPOINT_INTERVAL, TIMESTEPS = 4, 6, 14
TRAINER = {"timesteps": TIMESTEPS, "headless": True, "disable_progressbar": False, "close_environment_at_exit": False}


def reads_the_host(timestep):
    """The loop steps whose post_interaction writes, checkpoints or ends the run (timestep + 1 is what it checks)."""
    step = timestep + 1
    return step % WRITE_INTERVAL == 0 or step % CHECKPOINT_INTERVAL == 0 or step >= TIMESTEPS


def standin(discrete=False, **kwargs):
    """The Isaac Lab stand-in (8 envs, 12 observations, 2 action dimensions); ``discrete``: its actions are
    ``Discrete(4)``, a unit move along one axis either way (for DQN)."""
    import gymnasium
    import torch

    from skrl_like.envs import IsaacLabStandInEnv

    class DiscreteStandIn(IsaacLabStandInEnv):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.single_action_space = gymnasium.spaces.Discrete(2 * self.actions.shape[-1])
            self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)

        def _pre_physics_step(self, actions):
            # one-hot by comparison (torch's one_hot checks the range on the host)
            choices = torch.arange(self.single_action_space.n, device=self.device)
            moves = (actions.reshape(-1, 1) == choices).float()
            self.actions = moves[:, 0::2] - moves[:, 1::2]

    return (DiscreteStandIn if discrete else IsaacLabStandInEnv)(
        num_envs=8, observation_size=12, action_size=2, **kwargs
    )


def backend_classes(backend):
    module = lambda name: importlib.import_module(f"skrl_like.{backend}.{name}")  # noqa: E731
    instantiators = module("utils.model_instantiators")
    return types.SimpleNamespace(
        gaussian_model=instantiators.gaussian_model,
        deterministic_model=instantiators.deterministic_model,
        RandomMemory=module("memories").RandomMemory,
        RunningStandardScaler=module("resources.preprocessors").RunningStandardScaler,
        default_config=lambda algorithm: getattr(module(f"agents.{algorithm.lower()}"), f"{algorithm}_DEFAULT_CONFIG"),
    )


def make_agent(backend, algorithm, env, directory, **cfg_changes):
    backend = backend_classes(backend)
    network = lambda inputs: [{"name": "net", "input": inputs, "layers": [8], "activations": "elu"}]  # noqa: E731
    spaces = (env.observation_space, env.action_space, env.device)
    if algorithm.__name__ != "DQN":
        policy = backend.gaussian_model(*spaces, network=network("STATES"), output="ACTIONS")
    experiment = {"directory": directory, "write_interval": WRITE_INTERVAL, "checkpoint_interval": CHECKPOINT_INTERVAL}
    cfg = copy.deepcopy(backend.default_config(algorithm.__name__))
    if algorithm.__name__ == "DQN":
        q_network = lambda: backend.deterministic_model(*spaces, network=network("STATES"), output="ACTIONS")  # noqa: E731
        models = {"q_network": q_network(), "target_q_network": q_network()}
        cfg.update(batch_size=8, learning_starts=2)
        memory_size = 64
    elif algorithm.__name__ == "SAC":
        critic_network = network("concatenate([STATES, ACTIONS])")
        roles = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
        models = {role: backend.deterministic_model(*spaces, network=critic_network, output="ONE") for role in roles}
        cfg.update(batch_size=8, learning_starts=2, learn_entropy=True)
        memory_size = 64
    else:
        models = {"value": backend.deterministic_model(*spaces, network=network("STATES"), output="ONE")}
        cfg.update(rollouts=3, mini_batches=2)
        cfg.update(state_preprocessor=backend.RunningStandardScaler)
        cfg.update(state_preprocessor_kwargs={"size": env.observation_space})
        memory_size = 3
    if algorithm.__name__ != "DQN":
        models["policy"] = policy
    for role, model in models.items():
        if hasattr(model, "init_state_dict"):  # JAX models are built with their parameters here
            model.init_state_dict(role)
    cfg.update(experiment=experiment, **cfg_changes)
    memory = backend.RandomMemory(memory_size=memory_size, num_envs=env.num_envs, device=env.device)
    return algorithm(models=models, memory=memory, observation_space=env.observation_space,
                     action_space=env.action_space, device=env.device, cfg=cfg)  # fmt: skip
