"""Shared test setup: every test starts from the same seed (the environment and the layers: ../conftest.py)."""

import pytest
import torch

# One intra-op thread: the tests' tensors are tiny, and on a busy 2-core machine a second torch
# thread only spins. Results do not depend on it (the tests compare with explicit tolerances).
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield
