"""The test layers: every test belongs to exactly one, so each layer runs alone (``pytest -m <layer>``).

- ``unit``: the library's (and the course tools') modules, one ``tests/test_<module>.py`` each: no notebook, no
  subprocess, no server. The default for a file not named below.
- ``parity``: llmlab against the real ecosystem (transformers, PEFT, gguf, the openai client on a loopback server).
- ``labs``: the labs themselves: structure, mutants, alternatives, generated material, and nbval on ``solutions/``
  (with ``--nbval``: ``make test`` passes it; ``make test-fast`` does not collect notebooks at all).
- ``grading``: the grading pipeline: stages, resume, Dask, the hostile submissions.
- ``e2e``: end to end: browser, wheel, site, bundle, server processes.

``make test-fast`` = unit + parity; ``make test`` = everything but the heaviest end-to-end files (``HEAVY``) and the
slow hostile cases; ``make test-all`` (``.ci/run``) = all of it. A file joins a layer other than ``unit`` by being listed in
``LAYERS``; a single test can carry its own layer mark (``@pytest.mark.e2e``), which wins over its file's.
Other marks (``slow``, ``hostile``, ``notebooks``...) say something else and combine with the layer.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Set before anything imports transformers / huggingface_hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# Kernels started by nbval and nbgrader inherit this environment: never export MPLBACKEND=Agg here,
# or notebooks stop producing the plot outputs their stored versions have.
os.environ.pop("MPLBACKEND", None)
# Kernels (nbval) compute with one thread, as the notebooks were built: same numbers on any machine.
os.environ["OMP_NUM_THREADS"] = "1"

ROOT = Path(__file__).resolve().parent
LAYER_NAMES = ("unit", "parity", "labs", "grading", "e2e")

# Test files (relative to tests/) or folders (ending in "/") outside the unit layer.
LAYERS = {
    "parity": [
        "test_model_hf_parity.py", "test_moe_hf_parity.py", "test_sampling_hf_parity.py", "test_to_hf.py",
        "test_lora_peft.py", "test_quant_gguf.py", "test_serve_server.py", "test_serve_openai.py",
        "test_library_refusals.py", "test_gguf_real.py",
    ],
    "labs": [
        "test_lab_structure.py", "test_lab_mutants.py", "test_lab_alternatives.py", "test_lab08_server_cleanup.py",
        "test_execute_labs.py", "test_release_protection.py", "test_course_pipeline.py", "test_wheel_colab_setup.py",
        "test_numerics.py", "test_colab_badges.py", "test_claims.py", "test_mistakes_rates.py",
    ],
    "grading": [
        "test_grading.py", "test_grading_dask.py", "test_grading_export.py", "test_grading_resume.py",
        "test_grading_stages.py", "test_grading_faults.py", "test_grading_operations.py", "test_grading_analytics.py",
        "hostile/",
    ],
    "e2e": [
        "browser/", "test_wheel_install.py", "test_site.py", "test_dist.py", "test_serve_launcher.py",
        "test_serve_engine_process.py",
    ],
}
# The heaviest end-to-end files (a browser, fresh virtual environments, the whole bundle built and graded,
# grade.py under operational faults):
# `make test` leaves them to `make test-all` and CI.
HEAVY = ("browser/", "test_wheel_install.py", "test_dist.py", "test_grading_operations.py")
# Files whose tests run notebooks in a Jupyter kernel (nbval's items get the mark too).
NOTEBOOK_FILES = {"test_lab08_server_cleanup.py", "test_execute_labs.py", "test_wheel_install.py", "test_numerics.py"}

# The order in which pytest-xdist hands the files out (`make`: `--dist loadfile --no-loadscope-reorder`; a file's
# tests go to one worker together, so its module fixtures run once): first those of FIRST, the ones that take
# minutes, longest first (seconds in the last fresh-clone CI run, build log of `--durations`), so that none of them
# starts last while the other worker idles; then the rest by number of tests, most first (xdist's own order). The
# two grading batches come first, one per worker.
FIRST = (
    "test_grading.py",                     # ~660 s: the demo class graded (a module fixture)
    "hostile/test_hostile.py",             # ~610 s: every hostile case in one grading batch
    "test_numerics.py",                    # ~350 s: nine notebooks twice under other numerics, a class graded
    "browser/test_labs_in_jupyterlab.py",  # ~300 s: solved labs run from JupyterLab's menu
    "test_dist.py",                        # ~230 s: the bundle built, an instructor environment, grading with it
    "test_grading_dask.py",                # ~150 s
    # one unit (SHARED_UNITS): 149 s of CPU together, 288 s as three files each running every solution itself
    "test_lab_mutants.py", "test_mistakes_rates.py", "test_lab_alternatives.py",
    "test_grading_resume.py", "test_grading_operations.py", "browser/test_hub.py", "test_grading_export.py",
)


# Files that share work done once per test process, so pytest-xdist hands them to one worker as one unit (in
# FIRST's order): each solution executed in-process once for the three of them (labharness.lab_run), not once each.
SHARED_UNITS = {
    "test_lab_mutants.py": "lab runs", "test_mistakes_rates.py": "lab runs", "test_lab_alternatives.py": "lab runs",
}


def unit_of(nodeid: str) -> str:
    """The file of a test, relative to tests/ for the suite's files (as FIRST names them)."""
    file = nodeid.split("::", 1)[0]
    return file[len("tests/"):] if file.startswith("tests/") else file


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, but the files of SHARED_UNITS go to one worker together."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedUnits(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return SHARED_UNITS.get(unit_of(nodeid)) or super()._split_scope(nodeid)

    return SharedUnits(config, log)


def _listed(rel: str, entries) -> bool:
    """Whether a path relative to tests/ is one of the files, or inside one of the folders, of ``entries``."""
    return any(rel == e or (e.endswith("/") and rel.startswith(e)) for e in entries)


def layer_of(path: Path) -> str:
    """The layer of a test file: solutions/ notebooks are ``labs``; tests/ files as listed in LAYERS."""
    parts = path.resolve().relative_to(ROOT).parts if path.resolve().is_relative_to(ROOT) else ()
    if parts[:1] == ("solutions",):
        return "labs"
    rel = "/".join(parts[1:]) if parts[:1] == ("tests",) else ""
    return next((layer for layer, entries in LAYERS.items() if _listed(rel, entries)), "unit")


def pytest_collection_modifyitems(config, items):
    units = {}
    for item in items:
        units[item] = unit_of(item.nodeid)
        path = Path(str(item.path))
        if not any(item.get_closest_marker(name) for name in LAYER_NAMES):
            item.add_marker(getattr(pytest.mark, layer_of(path)))
        rel = path.resolve().relative_to(ROOT / "tests").as_posix() if path.resolve().is_relative_to(ROOT / "tests") else ""
        if _listed(rel, HEAVY):
            item.add_marker(pytest.mark.heavy)
        if path.suffix == ".ipynb" or path.name in NOTEBOOK_FILES:
            item.add_marker(pytest.mark.notebooks)
    # Scheduling order (see FIRST); a file's tests stay together and in their order.
    count, first_seen = {}, {}
    for i, item in enumerate(items):
        count[units[item]] = count.get(units[item], 0) + 1
        first_seen.setdefault(units[item], i)
    rank = {unit: FIRST.index(unit) if unit in FIRST else len(FIRST) for unit in count}
    order = {item: i for i, item in enumerate(items)}
    items.sort(key=lambda it: (rank[units[it]], -count[units[it]], first_seen[units[it]], order[it]))
