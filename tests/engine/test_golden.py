"""The shipped models (and tiny Hugging Face models) compute, on every preset, exactly the traces stored in
tests/fixtures/golden/: tokens, ids and probabilities equal, attention arrays bit-identical.
Regenerate with tests/fixtures/make_golden.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.fixtures.make_golden import GOLDEN, flatten, golden_models

MODELS = golden_models()


@pytest.mark.parametrize("model", MODELS)
def test_traces_equal_the_stored_ones(model):
    with np.load(GOLDEN / f"{model}.npz", allow_pickle=False) as z:
        stored = {k: z[k] for k in z.files}
    fresh = flatten(model)
    assert sorted(fresh) == sorted(stored)
    for key, value in fresh.items():
        if key.endswith("meta"):
            assert json.loads(str(value)) == json.loads(str(stored[key])), key
        else:
            assert value.dtype == stored[key].dtype and value.shape == stored[key].shape, key
            assert value.tobytes() == stored[key].tobytes(), key
