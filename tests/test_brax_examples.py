"""The Brax examples skip with a message (exit status 0) where brax is not installed, as CI runs them without the
brax extra."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_the_brax_example_skips_without_brax(backend):
    pytest.importorskip(backend)
    example = ROOT / "examples" / backend / "ppo_brax.py"
    hide_brax = f"import runpy, sys; sys.modules['brax'] = None; sys.argv = ['ppo_brax.py']; runpy.run_path({str(example)!r}, run_name='__main__')"
    result = subprocess.run([sys.executable, "-c", hide_brax], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "This example needs brax: pip install 'skrl_like[brax]'. Skipped." in result.stdout
