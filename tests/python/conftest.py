"""The tutorial scripts in examples/python import their shared checks (tutorial_checks.py) from
their own folder, which Python puts on the path when a script runs; tests that load them with
runpy need it there too."""
import pathlib
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
sys.path.insert(0, str(EXAMPLES))
