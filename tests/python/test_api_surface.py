"""Every public callable of the package says what it does (a docstring) and has a signature that
inspect.signature reads; the type stubs and py.typed ship with it."""
import inspect
import pathlib

import pytest

import tessera as ts
import tessera.dist
import tessera.distributed
import tessera.distributed._local_tensor
import tessera.distributed.device_mesh
import tessera.distributed.distributed_c10d
import tessera.distributed.tensor
import tessera.distributed.tensor.debug
import tessera.distributed.tensor.parallel
import tessera.distributed.fsdp
import tessera.distributed._composable
import tessera.distributed.pipelining
import tessera.models
import tessera.nn
import tessera.nn.functional
import tessera.nn.utils
import tessera.optim
import tessera.optim.lr_scheduler

MODULES = [ts, tessera.dist, tessera.distributed, tessera.distributed._local_tensor,
           tessera.distributed.device_mesh, tessera.distributed.distributed_c10d, tessera.distributed.tensor,
           tessera.distributed.tensor.debug, tessera.distributed.tensor.parallel, tessera.distributed.fsdp,
           tessera.distributed._composable, tessera.distributed.pipelining, tessera.models, tessera.nn, tessera.nn.functional, tessera.nn.utils,
           tessera.optim, tessera.optim.lr_scheduler]


def public_callables():
    """(qualified name, object) of every public function, class and public method of a class."""
    seen = {}
    for module in MODULES:
        for name in dir(module):
            if name.startswith("_") and name != "_get_default_group":
                continue
            value = getattr(module, name)
            if inspect.ismodule(value) or not callable(value):
                continue
            seen.setdefault(id(value), (module.__name__ + "." + name, value))
            if inspect.isclass(value):
                for attr, member in vars(value).items():
                    if attr.startswith("_") or not callable(member) or isinstance(member, type):
                        continue
                    seen.setdefault(id(member), (module.__name__ + "." + name + "." + attr, member))
    return sorted(seen.values(), key=lambda item: item[0])


CALLABLES = public_callables()


def test_there_are_many_public_callables():
    assert len(CALLABLES) > 150


def has_docstring(value):
    if hasattr(value, "__nb_signature__") and not inspect.isclass(value):
        # A bound function: nanobind renders the signature as its __doc__; what the function does is
        # each overload's own docstring, None where the binding gave none.
        return all(doc for _signature, doc, _defaults in value.__nb_signature__)
    return bool((getattr(value, "__doc__", None) or "").strip())


def test_every_public_callable_has_a_docstring():
    missing = [name for name, value in CALLABLES if not has_docstring(value)]
    assert not missing, f"{len(missing)} without a docstring: " + ", ".join(missing)


def test_inspect_signature_reads_every_bound_function():
    unknown = []
    for name, value in CALLABLES:
        init = vars(value).get("__init__") if inspect.isclass(value) else None
        if inspect.isclass(value) and not (inspect.isfunction(init) or hasattr(init, "__nb_signature__")):
            continue  # a class Python code does not construct (no constructor of its own)
        try:
            signature = inspect.signature(value)
        except (TypeError, ValueError) as error:
            unknown.append(f"{name} ({error})")
            continue
        assert isinstance(signature, inspect.Signature)
    assert not unknown, "inspect.signature fails: " + ", ".join(unknown)


def test_signatures_have_the_bound_names_and_defaults():
    full = inspect.signature(ts.full)
    assert list(full.parameters)[:2] == ["size", "fill_value"]
    assert full.parameters["dtype"].kind is inspect.Parameter.KEYWORD_ONLY
    assert full.parameters["dtype"].default is None and full.parameters["requires_grad"].default is False
    reduce = inspect.signature(ts.dist.all_reduce)
    assert list(reduce.parameters) == ["tensor", "op", "group", "async_op"]
    assert reduce.parameters["op"].default == ts.ReduceOp.SUM
    # A bound method's signature drops self; the unbound one keeps it.
    assert list(inspect.signature(ts.ones(2).transpose).parameters) == ["dim0", "dim1"]
    assert list(inspect.signature(ts.Tensor.transpose).parameters) == ["self", "dim0", "dim1"]
    assert "ranks" in inspect.signature(ts.LocalMode).parameters
    assert str(inspect.signature(ts.Tensor.numel)).startswith("(self)")


def test_stubs_and_py_typed_ship_with_the_package():
    package = pathlib.Path(ts.__file__).parent
    assert (package / "py.typed").is_file()
    stubs = list(package.glob("_tessera*/**/*.pyi")) + list(package.glob("_tessera*.pyi"))
    text = "\n".join(stub.read_text() for stub in stubs)
    assert "class Tensor" in text and "class LocalTensor(Tensor)" in text
    assert "def all_reduce(" in text and "def init_process_group(" in text
