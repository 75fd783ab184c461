"""Tessera: SPMD distributed tensor programs with PyTorch's spellings.

A thin binding over the C++ library (the _tessera module); nothing here computes.

    import tessera as ts
    with ts.LocalMode(4):
        x = ts.rank_map(lambda r: ts.ones(2) * r)
        ts.dist.all_reduce(x)

PyTorch's module paths work too: tessera.distributed (torch.distributed),
tessera.distributed.tensor, tessera.distributed.device_mesh, tessera.distributed.tensor.debug.
"""
import sys as _sys

from ._tessera import *  # noqa: F401,F403
from ._tessera import __version__, dist  # noqa: F401

# The collectives live in a submodule of the extension; registered so `import tessera.dist` and
# `from tessera.dist import all_reduce` work as for any module.
_sys.modules[__name__ + ".dist"] = dist

from . import _signatures, _tessera  # noqa: E402
from ._size import Size  # noqa: E402,F401

_tessera._install_signatures(_signatures.signature_of_function, _signatures.signature_of_bound_method)

# PyTorch's name for an int that may differ per rank: isinstance(t.shape[0], ts.SymInt) holds for a
# size that differs per rank (a ts.LocalInt) and not for a plain int, as in PyTorch.
SymInt = LocalInt  # noqa: F405

from . import distributed  # noqa: E402,F401  (after dist: it re-exports it)
# The extension's submodules of these names came with the star import; the packages of the same
# names (PyTorch's module paths) replace them.
for _name in ("models", "nn", "optim", "parallel", "pipelining"):
    globals().pop(_name, None)
from . import models, nn, optim  # noqa: E402,F401


def cmake_dir():
    """The directory holding this installed package's TesseraConfig.cmake. A C++ program builds
    against the package (libtessera, its headers and bundled plugins) with
    `cmake -DTessera_DIR=$(python -c "import tessera; print(tessera.cmake_dir())")` and
    `find_package(Tessera CONFIG REQUIRED)`; it finds the plugins with no variable set."""
    import os
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmake", "Tessera")
