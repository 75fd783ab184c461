"""The Python tutorial scenarios 1, 2 and 5 in examples/python: each check's actual value
equals its independently computed expected value, the golden values hold, and each script
runs on its own and exits 0 (and non-zero when a check fails)."""
import os
import pathlib
import runpy
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
SCENARIOS = ["scenario_01_basic.py", "scenario_02_collectives.py", "scenario_05_rank_specific.py"]


def load(name):
    return runpy.run_path(str(EXAMPLES / name), run_name="scenario")


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_check_of_the_scenario_agrees(name):
    scenario = load(name)
    assert scenario["CHECKS"]
    for check in scenario["CHECKS"]:
        actual, expected = check()
        assert actual == expected, check.__name__


def test_scenario_2_golden_values():
    scenario = load("scenario_02_collectives.py")
    assert scenario["all_reduce_sum"]()[0] == [[15, 18], [21, 24]]
    assert scenario["broadcast_from_rank"](0)[0] == [10, 20, 30]
    assert scenario["broadcast_from_rank"](2)[0] == [70, 80, 90]
    assert scenario["reduce_scatter_tensors"]()[0] == [[[6, 12]], [[18, 24]], [[30, 36]]]


@pytest.mark.parametrize("world_size", [1, 3, 7])
def test_scenario_5_at_other_world_sizes(world_size):
    scenario = load("scenario_05_rank_specific.py")
    for check in ("use_rank_map", "use_tensor_map", "disable_mode_temporarily", "per_rank_data_offset"):
        actual, expected = scenario[check](world_size)
        assert actual == expected, check


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_script_runs_and_exits_zero(name):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    assert done.stdout.count("ok  ") == len(load(name)["CHECKS"])


def test_main_exits_non_zero_when_a_check_fails(capsys):
    scenario = load("scenario_01_basic.py")
    scenario["CHECKS"].append(lambda: (1, 2))
    assert scenario["main"]() == 1
    assert "FAIL" in capsys.readouterr().out
