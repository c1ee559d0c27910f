"""Load an example script (or any script of the repository) as a module under a unique name (the torch and JAX
examples share file names)."""

import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def load_example(backend: str, name: str):
    return load_script(EXAMPLES / backend / f"{name}.py", f"example_{backend}_{name}")


def load_script(path: pathlib.Path, module_name: str):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
