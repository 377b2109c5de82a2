import os

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A random generator whose seed is printed (and settable with KRONEX_TEST_SEED)."""
    seed = int(os.environ.get("KRONEX_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
    print(f"{request.node.name}: seed {seed} (KRONEX_TEST_SEED={seed} reruns it)")
    return np.random.default_rng(seed)
