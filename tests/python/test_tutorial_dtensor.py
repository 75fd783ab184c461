"""Tutorial scenarios 3, 4 and 6 (examples/tutorial) from Python: each example compares what it computes with
an independently computed expectation and exits non-zero on a mismatch; here each runs as a
program, and each piece's (actual, expected) is compared too."""
import pathlib
import runpy
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
SCENARIOS = ["scenario_03_dtensor.py", "scenario_04_uneven.py", "scenario_06_multidim_mesh.py"]


@pytest.mark.parametrize("script", SCENARIOS)
def test_scenario_runs_and_passes(script):
    result = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout and "ok" in result.stdout


def load(script):
    return runpy.run_path(str(EXAMPLES / script))


def test_scenario_03_pieces():
    s = load("scenario_03_dtensor.py")
    actual, expected = s["distribute_and_verify"]()
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a, e)
    for name in ("dtensor_matmul", "dtensor_linear_layer"):
        np.testing.assert_allclose(*s[name](), rtol=1e-5, atol=1e-5, err_msg=name)


def test_scenario_04_pieces():
    s = load("scenario_04_uneven.py")
    for name in ("create_uneven_shards", "local_int_arithmetic"):
        actual, expected = s[name]()
        assert actual == expected, name
    (sizes, gathered), (expected_sizes, originals) = s["dtensor_uneven_sharding"]()
    assert sizes == expected_sizes == ([4, 4, 2], [4, 3, 3])  # the golden sizes (torch.chunk layout)
    for g, o in zip(gathered, originals):
        np.testing.assert_array_equal(g, o)


def test_scenario_06_pieces():
    s = load("scenario_06_multidim_mesh.py")
    actual, expected = s["create_2d_mesh"]()
    assert actual == expected
    np.testing.assert_allclose(*s["hybrid_parallelism"](), rtol=1e-5, atol=1e-5)
    (facts, gathered), (expected_facts, original) = s["create_3d_mesh"]()
    assert facts == expected_facts
    np.testing.assert_array_equal(gathered, original)
