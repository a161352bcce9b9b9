"""The shipped models (and tiny Hugging Face models) compute, on every preset, the traces stored in
tests/fixtures/golden/: tokens and ids equal, probabilities and attention arrays equal up to float32 rounding.
Regenerate with `.venv/bin/python -m tests.fixtures.make_golden`.

Not bit-identical: the same float32 kernels give results that differ in the last bits on another CPU (the
stored traces were written on one machine; a second machine of the same size differed by ~1e-8, an AMD EPYC by up
to 6e-6 on a no-scaling or everyday model's attention),
and CI runs on whichever machine it gets. Any change a refactor could make is far above TOL."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.fixtures.make_golden import GOLDEN, flatten, golden_models

MODELS = golden_models()
TOL = dict(rtol=1e-5, atol=2e-5)


def same(a, b, where: str = "") -> None:
    """a == b, numbers up to TOL (exact ints and bools), everything else exactly."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), where
        assert math.isclose(a, b, rel_tol=TOL["rtol"], abs_tol=TOL["atol"]), f"{where}: {a} != {b}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), where
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def computed(meta):
    """A trace's meta without where it ran (`model.device`, `model.dtype`, in the trace and its beams): the golden
    files hold what a model computes, the same on any device, and predate those keys."""
    if isinstance(meta, dict):
        return {k: computed({m: v for m, v in val.items() if m not in ("device", "dtype")} if k == "model"
                            and isinstance(val, dict) else val) for k, val in meta.items()}
    if isinstance(meta, list):
        return [computed(v) for v in meta]
    return meta


@pytest.mark.parametrize("model", MODELS)
def test_traces_equal_the_stored_ones(model):
    with np.load(GOLDEN / f"{model}.npz", allow_pickle=False) as z:
        stored = {k: z[k] for k in z.files}
    fresh = flatten(model)
    assert sorted(fresh) == sorted(stored)
    for key, value in fresh.items():
        if key.endswith("meta"):
            same(computed(json.loads(str(value))), computed(json.loads(str(stored[key]))), key)
        else:
            assert value.dtype == stored[key].dtype and value.shape == stored[key].shape, key
            np.testing.assert_allclose(value, stored[key], err_msg=key, **TOL)


def test_the_comparison_catches_a_real_change():
    same({"p": [0.5, 1e-9], "t": ["a"]}, {"p": [0.5 + 1e-7, 2e-9], "t": ["a"]})
    with pytest.raises(AssertionError):
        same({"p": [0.5]}, {"p": [0.5001]})
    with pytest.raises(AssertionError):
        same({"t": ["a"]}, {"t": ["b"]})
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(np.float32([0.25]), np.float32([0.2501]), **TOL)
