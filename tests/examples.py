"""Load an example script as a module under a unique name (the torch and JAX examples share file names)."""

import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def load_example(backend: str, name: str):
    path = EXAMPLES / backend / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{backend}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
