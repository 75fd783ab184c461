"""examples/python/llama.py trains the reference Llama with FSDP, tensor, sequence and loss
parallelism from Python, and examples/python/llama_pipeline.py adds pipeline parallelism in rank
programs; each one's losses and final parameters checksum must equal those the C++ example of the
same name (examples/<name>/<name>.cpp) prints: the C++ program's output is the oracle.

The C++ program is taken from TESSERA_<NAME>_EXAMPLE (TESSERA_LLAMA_EXAMPLE,
TESSERA_LLAMA_PIPELINE_EXAMPLE) when set, from the CMake tree the package was built in
(bin/<name> beside python/tessera), or else compiled against the installed package (which ships
libtessera and its headers)."""
import functools
import os
import pathlib
import re
import runpy
import shutil
import subprocess
import tempfile

import pytest

import tessera as ts

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECKSUM = re.compile(r"final parameters checksum ([0-9a-f]{16})")


def build_cpp_example(work, name):
    """Compiles examples/<name>/<name>.cpp against the installed package: its headers (include/) and
    libtessera beside the module."""
    package = pathlib.Path(ts.__file__).parent
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not (package / "include" / "tessera" / "tessera.hpp").is_file() or not list(package.glob("libtessera.so*")) \
            or compiler is None:
        pytest.fail(f"no C++ {name} example to compare with: set TESSERA_{name.upper()}_EXAMPLE to the built "
                    f"examples/{name} program (the package at {package} has no headers or libtessera, or no C++ "
                    "compiler was found)")
    program = work / name
    subprocess.run([compiler, "-std=c++20", "-O1", f"-I{package / 'include'}",
                    str(ROOT / "examples" / name / (name + ".cpp")), f"-L{package}", "-ltessera",
                    f"-Wl,-rpath,{package}", "-o", str(program)], check=True, capture_output=True)
    return program


@functools.lru_cache(maxsize=None)
def cpp_example(name):
    """Built at most once per session (the parametrized runs share it)."""
    given = os.environ.get(f"TESSERA_{name.upper()}_EXAMPLE")
    if given:
        return pathlib.Path(given)
    in_tree = pathlib.Path(ts.__file__).resolve().parents[2] / "bin" / name
    if in_tree.is_file():
        return in_tree
    return build_cpp_example(pathlib.Path(tempfile.mkdtemp(prefix=f"tessera-{name}-")), name)


RUNS = [("llama", []), ("llama_pipeline", ["--steps", "2"]), ("llama_pipeline", ["--schedule", "gpipe", "--steps", "1"])]


@pytest.mark.parametrize("name,args", RUNS, ids=["llama", "llama_pipeline_1f1b", "llama_pipeline_gpipe"])
def test_python_example_prints_the_cpp_examples_losses_and_checksum(capsys, monkeypatch, name, args):
    cpp = subprocess.run([str(cpp_example(name)), *args], check=True, capture_output=True,
                         text=True).stdout
    expected = CHECKSUM.search(cpp)
    assert expected, "the C++ example printed no checksum:\n" + cpp

    monkeypatch.setattr("sys.argv", [name + ".py", *args])
    with pytest.raises(SystemExit) as exit_status:
        runpy.run_path(str(ROOT / "examples" / "python" / (name + ".py")), run_name="__main__")
    printed = capsys.readouterr().out
    assert exit_status.value.code == 0, printed
    assert "losses match the dense run" in printed
    got = CHECKSUM.search(printed)
    assert got, "the Python example printed no checksum:\n" + printed
    assert got.group(1) == expected.group(1)
    # The losses the two print step by step agree to the digits printed.
    assert re.findall(r"^step .*$", printed, re.M) == re.findall(r"^step .*$", cpp, re.M)
