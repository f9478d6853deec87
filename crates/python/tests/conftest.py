"""Shared helpers of routeval's Python tests."""

import math
import os
import pathlib

import pytest


def shared_dir(*parts):
    """``$ROUTEVAL_SHARED/parts`` (routeval's shared goldens). Without the variable the test
    is skipped, and under ``CI=true`` a skip is a failure (the Rust tests' rule)."""
    root = os.environ.get("ROUTEVAL_SHARED")
    if not root:
        if os.environ.get("CI") == "true":
            pytest.fail("ROUTEVAL_SHARED is not set (required under CI=true)")
        pytest.skip("SKIPPED: needs ROUTEVAL_SHARED")
    path = pathlib.Path(root, *parts)
    if not path.exists():
        pytest.fail(f"{path} is missing")
    return path


def require(module):
    """``import module``, as ``pytest.importorskip`` does, except that under ``CI=true`` a
    missing module fails the test instead of skipping it (CI installs every test dependency:
    .ci/python-test-requirements.txt), the rule ``shared_dir`` follows."""
    if os.environ.get("CI") == "true":
        import importlib

        try:
            return importlib.import_module(module)
        except ImportError as e:
            pytest.fail(f"{module} is not installed (required under CI=true): {e}")
    return pytest.importorskip(module)


def close(a, b, tol=1e-12):
    """Equal within ``tol`` (absolute or relative); NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= tol * max(1.0, abs(a), abs(b))
    return a == b


def assert_nested_close(got, want, path="", tol=1e-12):
    """Same keys at every level, numbers within ``tol``, NaN == NaN."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: {type(got).__name__} instead of dict"
        assert set(got) == set(want), f"{path}: keys differ: {set(got) ^ set(want)}"
        for k in want:
            assert_nested_close(got[k], want[k], f"{path}/{k}", tol)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: lists differ"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_nested_close(g, w, f"{path}[{i}]", tol)
    elif isinstance(want, float) or isinstance(got, float):
        assert close(float(got), float(want), tol), f"{path}: {got!r} != {want!r}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"
