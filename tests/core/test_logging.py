"""The package logger: no "Logging error" after a test runner closed its stream, colour only on a terminal."""

import io
import logging
import os
import subprocess
import sys
import textwrap

from skrl_like import logger

USER_TEST = textwrap.dedent(
    """
    import atexit

    import gymnasium
    from skrl_like import logger
    from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
    from skrl_like.torch.envs.wrappers import wrap_env
    from skrl_like.torch.memories import RandomMemory
    from skrl_like.torch.trainers import SequentialTrainer
    from skrl_like.torch.utils.model_instantiators import categorical_model, deterministic_model


    def test_builds_a_trainer():
        atexit.register(lambda: logger.info("logged at exit"))  # as the trainer's own close hook does
        env = wrap_env(gymnasium.make("CartPole-v1"))
        network = [{"name": "net", "input": "STATES", "layers": [8]}]
        space = env.observation_space, env.action_space
        models = {
            "policy": categorical_model(*space, network=network, output="ACTIONS"),
            "value": deterministic_model(*space, network=network, output="ONE"),
        }
        cfg = {**PPO_DEFAULT_CONFIG, "rollouts": 4, "experiment": {"write_interval": 0, "checkpoint_interval": 0}}
        agent = PPO(models=models, memory=RandomMemory(4), cfg=cfg, observation_space=space[0], action_space=space[1])
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 4, "headless": True, "disable_progressbar": True})
    """
)


def test_a_users_pytest_session_that_builds_a_trainer_ends_without_logging_errors(tmp_path):
    (tmp_path / "test_user.py").write_text(USER_TEST)
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    session = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    output = session.stdout + session.stderr
    assert session.returncode == 0, output
    assert "1 passed" in output
    # the trainer's atexit hook logs "Closing environment" after pytest closed the stream it had swapped in
    assert "Logging error" not in output and "I/O operation on closed file" not in output, output
    assert "[skrl_like:INFO] logged at exit" in session.stderr  # still logged, to the real stderr


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_colour_codes_go_to_a_terminal_only(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    for stream, coloured in ((io.StringIO(), False), (_Terminal(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        logger.warning("disk almost full")
        line = stream.getvalue()
        assert line.strip().endswith("[skrl_like:WARNING] disk almost full" + ("\x1b[0m" if coloured else ""))
        assert ("\x1b[" in line) is coloured, repr(line)


def test_no_color_turns_colour_off_on_a_terminal(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("NO_COLOR", "1")
    logger.error("plain")
    assert terminal.getvalue() == "[skrl_like:ERROR] plain\n"


def test_a_closed_stream_is_skipped_silently(monkeypatch):
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    reported = []
    monkeypatch.setattr(logging.Handler, "handleError", lambda self, record: reported.append(record))
    logger.info("after the runner closed its capture")
    assert reported == []
