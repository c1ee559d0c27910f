"""The collection loop stays on the device: PPO, A2C, SAC and DQN on the Isaac Lab stand-in (through the "isaaclab"
wrapper), driven by the sequential and the step trainer with the progress bar on, writing every few steps, read
nothing on the host during a rollout's env steps (tests/host_syncs.py counts what would sync on a GPU, on a CPU too).

Excluded, as docs/gpu-simulators.md says: the write and checkpoint steps (and the run's last one), which read the
tracked values, the episode statistics and the deferred finite checks, and an on-policy update (once per rollout),
which reads its finite flags before it changes anything. SAC and DQN update at every step: their updates are counted."""

import pytest
import torch

from skrl_like.torch.agents.a2c import A2C
from skrl_like.torch.agents.dqn import DQN
from skrl_like.torch.agents.ppo import PPO
from skrl_like.torch.agents.sac import SAC
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.trainers import SequentialTrainer, StepTrainer
from tests.host_syncs import HostSyncs
from tests.loop_on_device import TIMESTEPS, TRAINER, WRITE_INTERVAL, make_agent, reads_the_host
from tests.loop_on_device import standin as standin_env

LOSS_TAGS = {
    PPO: "Loss / Policy loss",
    A2C: "Loss / Policy loss",
    SAC: "Loss / Policy loss",
    DQN: "Loss / Q-network loss",
}


def standin(device="cpu", discrete=False):
    # episodes of at most 5 steps: the self-resets and the episode statistics run within the test
    env = standin_env(discrete, max_episode_length=5, device=device)
    return wrap_env(env, wrapper="isaaclab", verbose=False)


def count_syncs_during_rollouts(trainer, agent, run):
    """Run ``run()`` counting the host syncs of every env step except those of :func:`reads_the_host` (and the
    on-policy updates, and the trainer's full-state checkpoints)."""
    syncs = HostSyncs()

    def pausing(method, when=lambda *args, **kwargs: True):
        def paused_if_due(*args, **kwargs):
            if not when(*args, **kwargs):
                return method(*args, **kwargs)
            with syncs.paused():
                return method(*args, **kwargs)

        return paused_if_due

    trainer._step = pausing(trainer._step, lambda states, timestep, *rest: reads_the_host(timestep))
    trainer._at_save_point = pausing(trainer._at_save_point)
    trainer._finish_loop = pausing(trainer._finish_loop)  # the run's final checkpoint, after the loop
    if isinstance(agent, (PPO, A2C)):
        agent._update = pausing(agent._update)
    # replay rows are drawn by torch's CPU generator, as skrl draws them: on a GPU a copy to the device, not a sync
    agent.memory._random_starts = pausing(agent.memory._random_starts)
    with syncs:
        run()
    return syncs


@pytest.mark.parametrize("algorithm", [PPO, A2C, SAC, DQN])
def test_a_sequential_run_reads_the_host_only_on_write_and_checkpoint_steps(algorithm, tmp_path):
    torch.manual_seed(0)
    env = standin(discrete=algorithm is DQN)
    agent = make_agent("torch", algorithm, env, str(tmp_path))
    rows = []
    agent.add_result_listener(rows.append)
    trainer = SequentialTrainer(env, agent, cfg={**TRAINER, "environment_info": "log"})
    syncs = count_syncs_during_rollouts(trainer, agent, trainer.train)
    assert syncs.calls == []
    assert syncs.paused_calls  # the counter ran: the write steps read the host
    # what was kept on the device was written: the env's log, the losses, the episodes that ended (at most 5 steps)
    assert len(rows) == TIMESTEPS // WRITE_INTERVAL
    assert all("Info / distance_to_target" in row for row in rows)
    assert LOSS_TAGS[algorithm] in rows[-1] and rows[-1]["Episode / Total timesteps (max)"] == 5
    assert trainer._loop_bar.postfix and "return=" in trainer._loop_bar.postfix  # the bar shows the written return


def test_a_step_trainer_run_reads_the_host_only_on_write_and_checkpoint_steps(tmp_path):
    torch.manual_seed(0)
    env = standin()
    agent = make_agent("torch", PPO, env, str(tmp_path))
    trainer = StepTrainer(env, agent, cfg={**TRAINER, "environment_info": "log"})

    def run():
        for timestep in range(TIMESTEPS):
            trainer.train(timestep=timestep)

    syncs = count_syncs_during_rollouts(trainer, agent, run)
    assert syncs.calls == [] and syncs.paused_calls


@pytest.mark.parametrize("algorithm", [SAC, DQN])
def test_an_update_at_every_step_names_a_non_finite_quantity_at_the_next_write_with_its_timestep(algorithm, tmp_path):
    env = standin(discrete=algorithm is DQN)
    agent = make_agent(
        "torch", algorithm, env, str(tmp_path), rewards_shaper=lambda rewards, *_: rewards * float("nan")
    )
    steps = []
    post_interaction = agent.post_interaction
    agent.post_interaction = lambda timestep, timesteps: (steps.append(timestep), post_interaction(timestep, timesteps))
    message = rf"{algorithm.__name__} update at timestep 2: the sampled rewards of gradient step 0"
    with pytest.raises(FloatingPointError, match=message):
        SequentialTrainer(env, agent, cfg={**TRAINER, "disable_progressbar": True}).train()
    # the first update (timestep 2, after learning_starts) went non-finite; read at the first write step (3)
    assert steps == [0, 1, 2, 3]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("algorithm", [PPO, SAC, DQN])
def test_on_a_gpu_the_loop_copies_nothing_to_the_host(algorithm, tmp_path):
    env = standin("cuda:0", discrete=algorithm is DQN)
    agent = make_agent("torch", algorithm, env, str(tmp_path))
    trainer = SequentialTrainer(env, agent, cfg={**TRAINER, "environment_info": "log"})
    syncs = count_syncs_during_rollouts(trainer, agent, trainer.train)
    assert syncs.calls == [] and syncs.paused_calls
