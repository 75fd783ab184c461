"""The tutorial scripts in examples/python import their shared checks (tutorial_checks.py) from
their own folder, which Python puts on the path when a script runs; tests that load them with
runpy need it there too. Also fixtures several test modules use."""
import pathlib
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
sys.path.insert(0, str(EXAMPLES))


@pytest.fixture
def direct_algorithms():
    """Pins the direct algorithm (sums in rank order, as NumPy computes them); restores the rules."""
    import tessera as ts

    saved = ts.dist.algorithms()
    ts.dist.set_algorithms("*:direct")
    yield
    ts.dist.set_algorithms(saved)
