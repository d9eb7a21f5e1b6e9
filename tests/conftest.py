"""Shared test setup: nothing may reach the network, and every test starts from the same seed."""

import os

# Set before anything imports transformers / huggingface_hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# Kernels started by nbval and nbgrader inherit this environment: never export MPLBACKEND=Agg here,
# or notebooks stop producing the plot outputs their stored versions have.
os.environ.pop("MPLBACKEND", None)
# Kernels (nbval) compute with one thread, as the notebooks were built: same numbers on any machine.
os.environ["OMP_NUM_THREADS"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

# One intra-op thread: the tests' tensors are tiny, and on a busy 2-core machine a second torch
# thread only spins. Results do not depend on it (the tests compare with explicit tolerances).
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield
