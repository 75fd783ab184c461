"""The installed package is a whole Tessera install for C++ too: a CMake project that calls
find_package(Tessera) with Tessera_DIR=tessera.cmake_dir() builds, links libtessera from the package
and runs with its bundled plugins, no variable set. The program's output is checked against values
worked out here."""
import os
import pathlib
import shutil
import subprocess

import pytest

import tessera as ts

CMAKE_LISTS = """cmake_minimum_required(VERSION 3.25)
project(uses_tessera CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(Tessera CONFIG REQUIRED)
add_executable(uses_tessera main.cpp)
target_link_libraries(uses_tessera PRIVATE Tessera::tessera)
"""

# Three ranks hold 1, 2 and 3 in both elements; their sum reaches every rank. The backend that
# computed it is a plugin the program had to find on its own.
MAIN = """#include <cstdio>
#include <tessera/tessera.hpp>
namespace ts = tessera;
int main() {
  ts::LocalMode mode(3);
  ts::Tensor t = ts::rank_map([](int rank) { return ts::full({2}, static_cast<float>(rank + 1)); });
  ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  for (int rank = 0; rank < 3; ++rank)
    std::printf("rank %d: %g %g\\n", rank, t.shard(rank).to_vector<float>()[0], t.shard(rank).to_vector<float>()[1]);
  std::printf("backend %s\\n", t.shard(0).backend().c_str());
}
"""


def test_cmake_dir_holds_the_package_config():
    config = pathlib.Path(ts.cmake_dir()) / "TesseraConfig.cmake"
    assert config.is_file(), f"{config} is missing from the installed package"


def test_a_cmake_project_builds_and_runs_against_the_installed_package(tmp_path):
    cmake = shutil.which("cmake")
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if cmake is None or compiler is None:
        pytest.skip("needs cmake and a C++ compiler on PATH")
    (tmp_path / "CMakeLists.txt").write_text(CMAKE_LISTS)
    (tmp_path / "main.cpp").write_text(MAIN)
    build = tmp_path / "build"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env.pop("CMAKE_PREFIX_PATH", None)
    configure = subprocess.run([cmake, "-S", str(tmp_path), "-B", str(build), f"-DTessera_DIR={ts.cmake_dir()}",
                                f"-DCMAKE_CXX_COMPILER={compiler}"], capture_output=True, text=True, env=env)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    built = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    ran = subprocess.run([str(build / "uses_tessera")], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines() == ["rank 0: 6 6", "rank 1: 6 6", "rank 2: 6 6", "backend cpu"]
