"""examples/python/llama.py trains the reference Llama with FSDP, tensor, sequence and loss
parallelism from Python; its final parameters checksum must equal the one the C++ example
(examples/llama/llama.cpp) prints: the C++ program's output is the oracle.

The C++ program is taken from TESSERA_LLAMA_EXAMPLE when set, from the CMake tree the package was
built in (bin/llama beside python/tessera), or else compiled against the installed package (which
ships libtessera's headers and CMake files)."""
import os
import pathlib
import re
import runpy
import shutil
import subprocess

import pytest

import tessera as ts

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECKSUM = re.compile(r"final parameters checksum ([0-9a-f]{16})")


def build_cpp_example(work):
    package = pathlib.Path(ts.__file__).parent
    config = next(package.glob("**/cmake/Tessera/TesseraConfig.cmake"), None)
    if config is None or shutil.which("cmake") is None:
        pytest.fail("no C++ llama example to compare with: set TESSERA_LLAMA_EXAMPLE to the built examples/llama "
                    f"program (the package at {package} has no CMake files, or cmake is missing)")
    source = work / "src"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(llama_oracle CXX)\nfind_package(Tessera REQUIRED)\n"
        f"add_executable(llama \"{ROOT / 'examples' / 'llama' / 'llama.cpp'}\")\n"
        "target_link_libraries(llama PRIVATE Tessera::tessera)\n")
    build = work / "build"
    subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                    f"-DTessera_DIR={config.parent}"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "-j2"], check=True, capture_output=True)
    return build / "llama"


def cpp_llama(work):
    given = os.environ.get("TESSERA_LLAMA_EXAMPLE")
    if given:
        return pathlib.Path(given)
    in_tree = pathlib.Path(ts.__file__).resolve().parents[2] / "bin" / "llama"
    if in_tree.is_file():
        return in_tree
    return build_cpp_example(work)


def test_python_llama_checksum_equals_the_cpp_examples(tmp_path, capsys):
    cpp = subprocess.run([str(cpp_llama(tmp_path))], check=True, capture_output=True, text=True).stdout
    expected = CHECKSUM.search(cpp)
    assert expected, "the C++ example printed no checksum:\n" + cpp

    with pytest.raises(SystemExit) as exit_status:
        runpy.run_path(str(ROOT / "examples" / "python" / "llama.py"), run_name="__main__")
    printed = capsys.readouterr().out
    assert exit_status.value.code == 0, printed
    assert "losses match the dense run" in printed
    got = CHECKSUM.search(printed)
    assert got, "the Python example printed no checksum:\n" + printed
    assert got.group(1) == expected.group(1)
    # The losses the two print step by step agree to the digits printed.
    assert re.findall(r"^step .*$", printed, re.M) == re.findall(r"^step .*$", cpp, re.M)
