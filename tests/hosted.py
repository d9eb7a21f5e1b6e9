"""A clean virtual environment holding only what a hosted notebook (Colab) already has.

Used by the wheel and bundle tests: llmlab is installed there from its wheel only, the way the labs'
setup cell does it in Colab, and notebooks run in kernels of that environment:

- kernel ``hosted``: a plain Python kernel of the clean environment;
- kernel ``hosted-colab``: the same, started with a stand-in ``google.colab`` module in
  ``sys.modules``, which is all the setup cell looks at to decide it runs in Colab.

Environments are cached under build/<name>-env/ (keyed by Python and the package list), so the tests
that share one pay for it once; llmlab is uninstalled from it before every use. `instructor_env` is the
same idea for grading: llmlab's dependencies and its `course` extra, without llmlab.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# What a hosted notebook has before the setup cell runs (Colab ships these and much more).
# torch is the version of the running test environment (on this project's machines, the CPU
# wheel kept on disk: nothing is downloaded for it).
BASELINE = ["numpy", "matplotlib", "ipykernel", "ipywidgets"]
COLAB_MARKER = "import sys, types; sys.modules['google.colab'] = types.ModuleType('google.colab')"


def torch_spec() -> str:
    return "torch==" + importlib.metadata.version("torch").split("+")[0]


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def environment(name: str, packages: list[str]) -> Path:
    """A clean environment with `packages` (created on first use, then cached), without llmlab."""
    key = hashlib.sha256(json.dumps([sys.version, packages]).encode()).hexdigest()[:12]
    env = REPO / "build" / f"{name}-env" / key
    ready = env / ".ready"
    if not ready.exists():
        if env.exists():
            shutil.rmtree(env)
        venv.EnvBuilder(with_pip=True, clear=True).create(env)
        proc = subprocess.run(
            [str(_python(env)), "-m", "pip", "install", "-q", *packages],
            capture_output=True, text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        if proc.returncode != 0:
            raise RuntimeError(f"could not create the {name} environment:\n{proc.stderr[-3000:]}")
        ready.write_text("ok\n")
    uninstall_llmlab(env)
    return env


def hosted_env() -> Path:
    """What a hosted notebook has: torch, numpy, matplotlib, a kernel and widgets."""
    return environment("hosted", [torch_spec(), *BASELINE])


def instructor_env() -> Path:
    """What an instructor installs to grade: llmlab's dependencies and its `course` extra (nbgrader...)."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = [d for d in project["dependencies"] if not d.startswith("torch")]
    return environment("instructor", [torch_spec(), *core, *project["optional-dependencies"]["course"]])


def uninstall_llmlab(env: Path) -> None:
    subprocess.run([str(_python(env)), "-m", "pip", "uninstall", "-q", "-y", "llmlab"],
                   capture_output=True, text=True)


def install(env: Path, wheel: Path) -> None:
    """Install the wheel with no index: everything else it needs must already be there."""
    proc = subprocess.run([str(_python(env)), "-m", "pip", "install", "-q", "--no-index", str(wheel)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pip install {wheel.name} failed:\n{proc.stderr[-3000:]}")


def kernels(env: Path, folder: Path) -> Path:
    """Write the kernelspecs of `env` under folder/kernels; returns the folder to put on JUPYTER_PATH."""
    names = {"hosted": None, "hosted-colab": COLAB_MARKER}
    for name, marker in names.items():
        argv = [str(_python(env))]
        if marker:
            argv += ["-c", f"{marker}; from ipykernel import kernelapp; kernelapp.launch_new_instance()"]
        else:
            argv += ["-m", "ipykernel_launcher"]
        spec = {"argv": [*argv, "-f", "{connection_file}"], "display_name": f"llmlab {name}", "language": "python"}
        (folder / "kernels" / name).mkdir(parents=True, exist_ok=True)
        (folder / "kernels" / name / "kernel.json").write_text(json.dumps(spec, indent=1))
    return folder


def clean_environ(jupyter_path: Path, **extra: str) -> dict:
    """Environment for tools that start kernels there: no PYTHONPATH, so the repository is invisible."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["JUPYTER_PATH"] = str(jupyter_path)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env
