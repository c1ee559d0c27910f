"""Callbacks, custom metrics, evaluation during training and curriculum (issue 14, points 2-4), driven through
both backends' real trainers and PPO agents on small hand-counted environments."""

import gymnasium
import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from skrl_like.core.callbacks import Callbacks, CallbacksList, make_callbacks
from skrl_like.core.envs.task import TaskSettableEnv, get_task, set_task
from skrl_like.utils import set_seed
from tests.core.test_trainer import QUIET, Backend

LENGTHS = (3, 5)  # the episode length of each sub-environment of the hand-counted env


class FixedLengthEnv(TaskSettableEnv):
    """Episodes of exactly ``length`` steps; the reward of step ``k`` (1-based) is ``k`` (so a whole episode's return
    is ``length * (length + 1) / 2``); the task is a number added to every reward."""

    observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, length: int = 3) -> None:
        self.length = length
        self.task = 0
        self.count = 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.count = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.count += 1
        return np.array([self.count], np.float32), float(self.count + self.task), self.count >= self.length, False, {}

    def set_task(self, task):
        self.task = task

    def get_task(self):
        return self.task


def fixed_length_env(backend, lengths=LENGTHS):
    vector = gymnasium.vector.SyncVectorEnv([lambda length=length: FixedLengthEnv(length) for length in lengths])
    return backend.wrappers.wrap_env(vector, verbose=False)


@pytest.fixture(params=["torch", "jax"])
def backend(request):
    set_seed(0)
    return Backend(request.param)


class Recorder(Callbacks):
    """Logs every hook call as a tuple; sets two custom metrics per episode."""

    def __init__(self, name: str = "", log: list = None) -> None:
        self.name = name
        self.log = [] if log is None else log

    def on_episode_start(self, *, trainer, env_index, episode):
        assert episode.env_index == env_index and episode.length == 0 and episode.total_reward == 0.0
        self.log.append((self.name, "start", env_index))

    def on_episode_step(self, *, trainer, env_index, episode):
        self.log.append((self.name, "step", env_index, episode.length))

    def on_episode_end(self, *, trainer, env_index, episode):
        # the observation of the last step is the terminal one (the step count), not the next episode's first
        assert float(np.asarray(episode.last_observation).reshape(-1)[0]) == episode.length
        episode.custom_metrics["length"] = episode.length
        episode.custom_metrics["return"] = episode.total_reward
        self.log.append((self.name, "end", env_index, episode.length, episode.total_reward))

    def on_sample_end(self, *, trainer, agent, timestep):
        self.log.append((self.name, "sample_end", timestep))

    def on_update_start(self, *, trainer, agent, timestep):
        self.log.append((self.name, "update_start", timestep))

    def on_update_end(self, *, trainer, agent, timestep):
        self.log.append((self.name, "update_end", timestep))


def expected_log(timesteps, rollouts, name=""):
    """The hook calls worked out by hand: per step each sub-env's step (then end and start when its episode ends),
    then, every ``rollouts`` steps, the update's three hooks."""
    log = [(name, "start", index) for index in range(len(LENGTHS))]
    lengths = [0] * len(LENGTHS)
    for timestep in range(timesteps):
        for index, episode_length in enumerate(LENGTHS):
            lengths[index] += 1
            log.append((name, "step", index, lengths[index]))
            if lengths[index] == episode_length:
                log.append((name, "end", index, episode_length, episode_length * (episode_length + 1) / 2))
                log.append((name, "start", index))
                lengths[index] = 0
        if (timestep + 1) % rollouts == 0:
            log += [(name, "sample_end", timestep), (name, "update_start", timestep), (name, "update_end", timestep)]
    return log


def train(
    backend,
    tmp_path,
    cfg,
    lengths=LENGTHS,
    rollouts=4,
    evaluation_env=None,
    write_interval=10,
    trainer="SequentialTrainer",
):
    """Train a PPO agent on the hand-counted env; a ``StepTrainer`` is stepped through the same timesteps."""
    env = fixed_length_env(backend, lengths)
    experiment = {"write_interval": write_interval, "checkpoint_interval": 0, "directory": str(tmp_path)}
    experiment["experiment_name"] = "run"
    agent = backend.agent(env, rollouts=rollouts, experiment=experiment)
    trainer = getattr(backend.trainers, trainer)(
        env=env, agents=agent, cfg={**QUIET, **cfg}, evaluation_env=evaluation_env
    )
    if trainer._stepping:
        for timestep in range(trainer.timesteps):
            trainer.train(timestep)
    else:
        trainer.train()
    return trainer, agent


def scalars(tmp_path):
    accumulator = EventAccumulator(str(tmp_path / "run"))
    accumulator.Reload()
    return {
        tag: [(event.step, event.value) for event in accumulator.Scalars(tag)] for tag in accumulator.Tags()["scalars"]
    }


# -- callbacks ---------------------------------------------------------------------------------------------------


def test_callbacks_are_called_in_order_with_hand_counted_episodes_and_updates(backend, tmp_path):
    recorder = Recorder()
    train(backend, tmp_path, {"timesteps": 10, "callbacks": recorder})
    assert recorder.log == expected_log(10, rollouts=4)


def test_a_list_of_callbacks_runs_in_list_order_at_every_hook(backend, tmp_path):
    log = []
    train(backend, tmp_path, {"timesteps": 8, "callbacks": [Recorder("a", log), Recorder("b", log)]})
    expected = [entry for pair in zip(expected_log(8, 4, "a"), expected_log(8, 4, "b")) for entry in pair]
    assert log == expected


def test_a_callbacks_class_is_instantiated_and_its_update_hooks_run_at_the_agents_hook_point(backend, tmp_path):
    seen = []

    class Checking(Recorder):
        def on_update_start(self, *, trainer, agent, timestep):
            # the agent's own methods run (nothing is wrapped); the trainer's hooks are set only while it trains
            seen.append(("_update" in vars(agent), "write_tracking_data" in vars(agent), agent.trainer_hooks))

    trainer, agent = train(backend, tmp_path, {"timesteps": 4, "callbacks": Checking})
    assert isinstance(trainer.callbacks, Checking)
    assert seen == [(False, False, trainer._agent_hooks)] and trainer._agent_hooks is not None
    assert agent.trainer_hooks is None
    trainer.eval()  # no updates, no hooks
    assert len(seen) == 1 and agent.trainer_hooks is None


def test_the_trainer_plugs_into_the_agent_only_through_its_documented_extension_points(backend, tmp_path):
    """The trainer's hooks and result listeners reach an agent through ``set_trainer_hooks`` and
    ``add_result_listener``/``remove_result_listener``, which an agent class may override (nothing is set behind
    its back), and are taken back when the run ends."""
    calls = []
    env = fixed_length_env(backend)
    experiment = {"write_interval": 4, "checkpoint_interval": 0, "directory": str(tmp_path)}
    agent = backend.agent(env, rollouts=4, experiment=experiment)

    class Watched(type(agent)):
        def set_trainer_hooks(self, hooks):
            calls.append(("hooks", type(hooks).__name__))
            return super().set_trainer_hooks(hooks)

        def add_result_listener(self, listener):
            calls.append(("add", listener.__name__))
            super().add_result_listener(listener)

        def remove_result_listener(self, listener):
            calls.append(("remove", listener.__name__))
            super().remove_result_listener(listener)

    class Results(Callbacks):
        def on_update_start(self, *, trainer, agent, timestep):
            pass

        def on_train_result(self, *, trainer, result):
            pass

    agent.__class__ = Watched  # the same agent, its class now overriding the extension points
    trainer = backend.trainers.SequentialTrainer(
        env=env, agents=agent, cfg={**QUIET, "timesteps": 8, "callbacks": Results()}
    )
    trainer.train()
    assert calls == [
        ("add", "_show_result"),
        ("hooks", "AgentHooks"),
        ("add", "_on_train_result"),
        ("remove", "_on_train_result"),
        ("hooks", "NoneType"),
        ("remove", "_show_result"),
    ]
    assert agent.trainer_hooks is None and agent.result_listeners == []


def test_without_update_callbacks_or_evaluation_the_agents_get_no_hooks(backend, tmp_path):
    class EpisodesOnly(Callbacks):
        def on_episode_end(self, *, trainer, env_index, episode):
            assert trainer.agents.trainer_hooks is None  # so the agent calls nothing at its updates and writes

    trainer, _ = train(backend, tmp_path, {"timesteps": 8, "callbacks": EpisodesOnly()})
    assert trainer._agent_hooks is None


def test_custom_metrics_are_reduced_per_write_interval_into_tensorboard(backend, tmp_path):
    # 10 steps, one write at 10: episodes of sub-env 0 end at steps 3, 6, 9 (length 3, return 6), of sub-env 1 at
    # 5 and 10 (length 5, return 15); the one ending at the write step is in that row
    train(backend, tmp_path, {"timesteps": 20, "callbacks": Recorder()})
    written = scalars(tmp_path)
    assert written["Custom / length (mean)"] == [(10, pytest.approx(19 / 5)), (20, pytest.approx((3 * 3 + 5 * 2) / 5))]
    assert written["Custom / length (min)"] == [(10, 3.0), (20, 3.0)]
    assert written["Custom / length (max)"] == [(10, 5.0), (20, 5.0)]
    assert written["Custom / return (mean)"][0] == (10, pytest.approx((3 * 6 + 2 * 15) / 5))
    assert written["Custom / return (max)"][0] == (10, 15.0)


def test_a_custom_metric_that_is_not_a_number_fails_naming_it(backend, tmp_path):
    class Bad(Callbacks):
        def on_episode_end(self, *, trainer, env_index, episode):
            episode.custom_metrics["label"] = "long"

    with pytest.raises(TypeError, match=r"custom_metrics\['label'\] of sub-environment 0 is 'long'"):
        train(backend, tmp_path, {"timesteps": 5, "callbacks": Bad()})


def test_eval_goes_on_with_the_running_episodes_and_runs_no_update_hooks(backend, tmp_path):
    recorder = Recorder()
    trainer, _ = train(backend, tmp_path, {"timesteps": 4, "callbacks": recorder})
    recorder.log.clear()
    trainer.eval()  # 4 more steps of the same (vector) env: its episodes are 4 steps in, not new
    assert recorder.log == expected_log(8, rollouts=100)[len(expected_log(4, rollouts=100)) :]


def test_make_callbacks_accepts_none_a_class_an_instance_and_lists():
    assert make_callbacks(None) is None and make_callbacks([]) is None
    instance = Recorder()
    assert make_callbacks(instance) is instance
    chained = make_callbacks([Recorder, instance])
    assert isinstance(chained, CallbacksList) and chained.callbacks[1] is instance
    assert chained.overrides("on_episode_end") and not chained.overrides("on_train_result")


# -- evaluation during training ------------------------------------------------------------------------------------


def parameters(backend, agent):
    policy = agent.models["policy"]
    if backend.name == "torch":
        return [p.detach().numpy().copy() for p in policy.parameters()]
    import jax

    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(policy.state_dict.params)]


def test_evaluation_changes_neither_the_training_random_stream_nor_the_training_env(backend, tmp_path):
    # deterministic evaluation still draws random numbers: acting samples, then the mean action is played
    cfg = {"timesteps": 24}
    set_seed(3)
    _, plain = train(backend, tmp_path / "plain", cfg)
    set_seed(3)
    evaluation_env = fixed_length_env(backend, (4, 2))
    evaluated_cfg = {**cfg, "evaluation_interval": 10, "evaluation_episodes": 3}
    trainer, evaluated = train(backend, tmp_path / "evaluated", evaluated_cfg, evaluation_env=evaluation_env)
    for before, after in zip(parameters(backend, plain), parameters(backend, evaluated)):
        np.testing.assert_array_equal(before, after)
    # two evaluations (at 10 and 20), each 3 episodes: 2 per sub-env (ceil(3 / 2)), the first 3 kept
    assert trainer.last_evaluation["timestep"] == 20
    assert trainer.last_evaluation["lengths"] == [4, 4, 2]
    written = scalars(tmp_path / "evaluated")
    assert written["Evaluation / Total reward (mean)"] == [(10, pytest.approx((10 + 10 + 3) / 3))] * 1 + [
        (20, pytest.approx((10 + 10 + 3) / 3))
    ]
    assert written["Evaluation / Total reward (min)"] == [(10, 3.0), (20, 3.0)]
    assert written["Evaluation / Total reward (max)"] == [(10, 10.0), (20, 10.0)]
    assert written["Evaluation / Episode length (mean)"] == [(10, pytest.approx(10 / 3)), (20, pytest.approx(10 / 3))]
    assert "Evaluation / Total reward (mean)" not in scalars(tmp_path / "plain")


def test_evaluation_config_errors_name_the_fix(backend, tmp_path):
    env = fixed_length_env(backend)
    agent = backend.agent(env, rollouts=4)
    Trainer = backend.trainers.SequentialTrainer
    with pytest.raises(ValueError, match=r"needs an evaluation environment: pass evaluation_env=wrap_env"):
        Trainer(env=env, agents=agent, cfg={**QUIET, "evaluation_interval": 10})
    with pytest.raises(ValueError, match="evaluation_env is the training env"):
        Trainer(env=env, agents=agent, cfg={**QUIET, "evaluation_interval": 10}, evaluation_env=env)
    other = backend.wrappers.wrap_env(
        gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False
    )
    with pytest.raises(ValueError, match="evaluation_env's observation space has size 4, the training env's 1"):
        Trainer(env=env, agents=agent, cfg={**QUIET, "evaluation_interval": 10}, evaluation_env=other)
    # the agent writes every 10 steps: evaluation runs right before a write
    with pytest.raises(ValueError, match=r"not a multiple of the agent's write interval \(10 timesteps.*=10"):
        train(backend, tmp_path, {"timesteps": 10, "evaluation_interval": 7}, evaluation_env=fixed_length_env(backend))
    with pytest.raises(ValueError, match="needs the agent to write results"):
        train(
            backend,
            tmp_path,
            {"timesteps": 10, "evaluation_interval": 10},
            evaluation_env=fixed_length_env(backend),
            write_interval=0,
        )


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("evaluation_interval", -1, "an int >= 0"),
        ("evaluation_interval", 1.5, "an int >= 0"),
        ("evaluation_episodes", 0, "an int >= 1"),
        ("callbacks", object(), "None, a Callbacks subclass or instance"),
        ("callbacks", [Recorder(), "x"], "None, a Callbacks subclass or instance"),
        ("env_task_fn", 3, "None or a function"),
    ],
)
def test_bad_values_of_the_new_keys_are_rejected_with_the_fix(backend, key, value, expected):
    env = fixed_length_env(backend)
    with pytest.raises(ValueError, match=rf"SequentialTrainer cfg\['{key}'\] must be {expected}.*pass e\.g\."):
        backend.trainers.SequentialTrainer(env=env, agents=backend.agent(env, rollouts=4), cfg={**QUIET, key: value})


def test_a_misspelt_new_key_suggests_the_right_one(backend):
    env = fixed_length_env(backend)
    with pytest.raises(ValueError, match="Did you mean 'evaluation_interval'"):
        backend.trainers.SequentialTrainer(env=env, agents=backend.agent(env), cfg={"evaluation_intervall": 10})


def test_the_step_trainer_runs_the_callbacks_and_evaluation_at_its_steps_as_the_sequential_trainer(backend, tmp_path):
    results = []

    class WithResults(Recorder):
        def on_train_result(self, *, trainer, result):
            results.append(result["timestep"])

    recorder = WithResults()
    cfg = {"timesteps": 20, "callbacks": recorder, "evaluation_interval": 10, "evaluation_episodes": 3}
    evaluation_env = fixed_length_env(backend, (4, 2))
    trainer, agent = train(backend, tmp_path, cfg, evaluation_env=evaluation_env, trainer="StepTrainer")
    assert recorder.log == expected_log(20, rollouts=4)
    assert results == [10, 20]
    assert agent.trainer_hooks is not None and "trainer_hooks" not in agent.run_state()["helpers"]  # not run state
    assert trainer.last_evaluation["timestep"] == 20 and trainer.last_evaluation["lengths"] == [4, 4, 2]
    # eval steps go on with the running episodes, and run no update, evaluation or results hook (a row is written
    # at 30, an evaluation timestep)
    recorder.log.clear()
    for timestep in range(20, 30):
        trainer.eval(timestep)
    assert recorder.log == expected_log(30, rollouts=100)[len(expected_log(20, rollouts=100)) :]
    assert results == [10, 20] and trainer.last_evaluation["timestep"] == 20


# -- curriculum: the env side ----------------------------------------------------------------------------------


class VectorTaskEnv(gymnasium.vector.SyncVectorEnv):
    """A vector env that handles tasks itself (e.g. a GPU simulator): one task for the whole batch."""

    def __init__(self):
        super().__init__([lambda: FixedLengthEnv(3), lambda: FixedLengthEnv(3)])
        self.tasks_set = []

    def set_task(self, task):
        self.tasks_set.append(task)

    def get_task(self):
        return self.tasks_set[-1] if self.tasks_set else None


def test_set_task_reaches_every_sub_env_of_a_gymnasium_vector_env_and_a_wrapped_single_env(backend):
    vector = fixed_length_env(backend)
    set_task(vector, 2)
    assert get_task(vector) == (2, 2)
    single = backend.wrappers.wrap_env(gymnasium.wrappers.TimeLimit(FixedLengthEnv(3), 10), verbose=False)
    set_task(single, 5)
    assert get_task(single) == 5 and single._env.unwrapped.task == 5
    own = backend.wrappers.wrap_env(VectorTaskEnv(), verbose=False)
    set_task(own, 7)
    assert own._env.tasks_set == [7] and get_task(own) == 7
    assert own._env.envs[0].task == 0  # the vector env decided not to forward it


def test_an_env_without_set_task_fails_at_construction(backend):
    env = backend.wrappers.wrap_env(
        gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False
    )
    with pytest.raises(
        TypeError, match=r"\(SyncVectorEnv of CartPoleEnv\) has no set_task\(\) method.*TaskSettableEnv"
    ):
        backend.trainers.SequentialTrainer(
            env=env, agents=backend.agent(env), cfg={**QUIET, "env_task_fn": lambda results, env, ctx: 1}
        )


# -- results rows: on_train_result and the curriculum ----------------------------------------------------------


def test_on_train_result_gets_each_row_with_the_custom_and_evaluation_values(backend, tmp_path):
    rows = []

    class Results(Recorder):
        def on_train_result(self, *, trainer, result):
            rows.append(result)

    cfg = {"timesteps": 20, "callbacks": Results(), "evaluation_interval": 20, "evaluation_episodes": 2}
    _, agent = train(backend, tmp_path, cfg, evaluation_env=fixed_length_env(backend))
    assert [row["timestep"] for row in rows] == [10, 20]
    assert rows[0]["Custom / length (mean)"] == pytest.approx(19 / 5)
    assert "Evaluation / Total reward (mean)" not in rows[0]
    assert rows[1]["Evaluation / Total reward (max)"] == 15.0  # one episode of each sub-env: returns 6 and 15
    assert agent.result_listeners == []  # the trainer's listener is removed when the run ends


class TaskWrapper(gymnasium.Wrapper):
    """A gymnasium wrapper that makes an env task-settable: the task is a bonus added to every reward."""

    def __init__(self, env):
        super().__init__(env)
        self.bonus = 0

    def set_task(self, task):
        self.bonus = task

    def get_task(self):
        return self.bonus

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward + self.bonus, terminated, truncated, info


def test_the_curriculum_sets_each_iterations_task_on_every_sub_env_of_a_vector_env(backend, tmp_path):
    calls = []

    def env_task_fn(train_results, env, env_ctx):
        calls.append((env_ctx.timestep, env_ctx.task, env_ctx.num_envs, train_results["Reward / Total reward (mean)"]))
        return env_ctx.timestep // 10

    trainer, _ = train(backend, tmp_path, {"timesteps": 30, "env_task_fn": env_task_fn})
    # the bonus (task) of 1 is added from step 11 on: in 11..20 the episodes ending at 12, 15, 18 (sub-env 0) return
    # 6 + 2, 6 + 3, 6 + 3 and those ending at 15 and 20 (sub-env 1) 15 + 5 each
    assert calls[:2] == [(10, (0, 0), 2, pytest.approx(48 / 5)), (20, (1, 1), 2, pytest.approx(66 / 5))]
    assert calls[2][:2] == (30, (2, 2))
    assert get_task(trainer.env) == (3, 3)


def test_the_curriculum_reaches_a_single_env_through_its_gymnasium_wrapper(backend, tmp_path):
    env = backend.wrappers.wrap_env(TaskWrapper(gymnasium.wrappers.TimeLimit(FixedLengthEnv(100), 4)), verbose=False)
    experiment = {"write_interval": 8, "checkpoint_interval": 0, "directory": str(tmp_path)}
    agent = backend.agent(env, rollouts=4, experiment=experiment)
    tasks = []

    def env_task_fn(train_results, env, env_ctx):
        tasks.append((env_ctx.task, train_results["Reward / Total reward (mean)"]))
        return env_ctx.task + 10

    cfg = {**QUIET, "timesteps": 16, "env_task_fn": env_task_fn}
    backend.trainers.SequentialTrainer(env=env, agents=agent, cfg=cfg).train()
    # truncated after 4 steps: returns 1+2+3+4 = 10, then 10 more per step once the task is 10
    assert tasks == [(0, 10.0), (10, 50.0)]
    assert get_task(env) == 20


def test_a_curriculum_without_results_rows_fails_with_the_fix(backend, tmp_path):
    with pytest.raises(ValueError, match=r"env_task_fn'\] is called after each results row.*write_interval"):
        train(backend, tmp_path, {"timesteps": 4, "env_task_fn": lambda r, e, c: 0}, write_interval=0)


# -- checkpoints: on_checkpoint, the best one chosen by evaluation ---------------------------------------------------


def test_on_checkpoint_gets_each_full_state_checkpoint_and_the_best_is_chosen_by_evaluation(backend, tmp_path):
    import filecmp

    from skrl_like.core.checkpoints import find_checkpoint

    evaluation_env = fixed_length_env(backend)
    paths = []

    class Schedule(Callbacks):
        """Changes the evaluation env's reward bonus after each row: the evaluations at 10, 20, 30 see bonus 0, -5,
        +5, so the best evaluation is the last, while the training return is the same in every row."""

        def on_train_result(self, *, trainer, result):
            set_task(evaluation_env, {10: -5, 20: 5}.get(result["timestep"], 0))

        def on_checkpoint(self, *, trainer, path):
            paths.append(path)

    env = fixed_length_env(backend)
    experiment = {"write_interval": 10, "checkpoint_interval": 10, "directory": str(tmp_path), "experiment_name": "run"}
    agent = backend.agent(env, rollouts=5, experiment=experiment)
    cfg = {**QUIET, "timesteps": 30, "callbacks": Schedule(), "evaluation_interval": 10, "evaluation_episodes": 2}
    trainer = backend.trainers.SequentialTrainer(env=env, agents=agent, cfg=cfg, evaluation_env=evaluation_env)
    trainer.train()
    checkpoints = tmp_path / "run" / "checkpoints"
    assert paths == [str(checkpoints / f"run_{timestep}.ckpt") for timestep in (10, 20, 30)]
    best = find_checkpoint(str(tmp_path / "run"), "best")
    assert filecmp.cmp(best, paths[2], shallow=False) and not filecmp.cmp(best, paths[0], shallow=False)
    # at 30 one episode per sub-env with bonus 5 per step: (6 + 3 * 5 + 15 + 5 * 5) / 2
    assert trainer.last_evaluation["Evaluation / Total reward (mean)"] == pytest.approx(30.5)
    # a trainer restored from the checkpoint at 20 compares its next evaluations with the best before it (10's)
    env = fixed_length_env(backend)
    agent = backend.agent(env, rollouts=5, experiment={**experiment, "experiment_name": "resumed"})
    resumed = backend.trainers.SequentialTrainer(env=env, agents=agent, cfg=cfg, evaluation_env=evaluation_env)
    resumed.restore(paths[1])
    assert (resumed._evaluation.best_timestep, resumed._evaluation.best_return) == (10, pytest.approx(10.5))
