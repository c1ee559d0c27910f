"""benchmarks/skrl_rnn_scripts.py, the driver that runs skrl 1.4.3's PendulumNoVel scripts on skrl_like: it changes
only their import lines and their trainer's timesteps, and every import it writes resolves in skrl_like (the names
the 30 scripts import, listed here by hand)."""

import pathlib

import pytest

from examples import load_script

DRIVER = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "skrl_rnn_scripts.py"
IMPORTS = """\
from skrl.agents.torch.ppo import PPO_DEFAULT_CONFIG
from skrl.agents.torch.ppo import PPO_RNN as PPO
from skrl.agents.torch.trpo import TRPO_RNN as TRPO
from skrl.agents.torch.sac import SAC_RNN as SAC
from skrl.agents.torch.td3 import TD3_RNN as TD3
from skrl.agents.torch.ddpg import DDPG_RNN as DDPG
from skrl.envs.wrappers.torch import wrap_env
from skrl.memories.torch import RandomMemory
from skrl.models.torch import DeterministicMixin, GaussianMixin, Model
from skrl.resources.noises.torch import GaussianNoise, OrnsteinUhlenbeckNoise
from skrl.resources.preprocessors.torch import RunningStandardScaler
from skrl.resources.schedulers.torch import KLAdaptiveRL
from skrl.trainers.torch import SequentialTrainer
from skrl.utils import set_seed
"""


@pytest.fixture(scope="module")
def driver():
    return load_script(DRIVER, "skrl_rnn_scripts")


def test_only_the_import_lines_and_the_timesteps_change_and_the_imports_resolve(driver):
    body = 'import torch\ncfg["rollouts"] = 1024\ncfg_trainer = {"timesteps": 100000, "headless": True}\n'
    rewritten = driver.rewrite(IMPORTS + body, 1032)
    old_lines, new_lines = (IMPORTS + body).splitlines(), rewritten.splitlines()
    changed = [(old, new) for old, new in zip(old_lines, new_lines) if old != new]
    assert len(new_lines) == len(old_lines) and len(changed) == IMPORTS.count("\n") + 1
    assert (
        "from skrl.agents.torch.ppo import PPO_RNN as PPO",
        "from skrl_like.torch.agents.ppo import PPO_RNN as PPO",
    ) in changed
    assert ("from skrl.utils import set_seed", "from skrl_like.utils import set_seed") in changed
    assert new_lines[-1] == 'cfg_trainer = {"timesteps": 1032, "headless": True}'
    exec(compile(rewritten.split("import torch")[0], "rewritten imports", "exec"), {})
    assert driver.smoke_timesteps(body, 8) == 1032
    assert driver.smoke_timesteps('cfg["learning_starts"] = 1000\n', 8) == 1008


def test_a_script_it_cannot_shorten_is_refused(driver):
    with pytest.raises(ValueError, match="expected one 'cfg_trainer"):
        driver.rewrite("trainer = SequentialTrainer(cfg={'timesteps': 10})\n", 5)
    with pytest.raises(ValueError, match="an import of skrl is left"):
        driver.rewrite('import skrl\ncfg_trainer = {"timesteps": 10}\n', 5)
    assert len(driver.script_names(feedforward=False)) == 30
