"""torch.distributed._local_tensor's names: local tensors and the mode that makes them.

Tessera's own names are ts.LocalMode, ts.LocalInt, ts.maybe_disable_local_mode and ts.run_per_rank;
this module gives them PyTorch's spellings, so a LocalTensor program runs with only its imports changed.
"""
import functools as _functools

from tessera._tessera import (  # noqa: F401
    LocalInt,
    LocalMode,
    LocalTensor,
    rank_map,
    run_per_rank,
    tensor_map,
)
from tessera._tessera import LocalInt as LocalIntNode  # noqa: F401
from tessera._tessera import LocalMode as LocalTensorMode  # noqa: F401
from tessera._tessera import maybe_disable_local_mode as maybe_disable_local_tensor_mode  # noqa: F401


def maybe_run_for_local_tensor(func):
    """Decorator: inside a local mode (or given local arguments) `func` runs once per rank on that
    rank's values (a local tensor's shard, a ts.LocalInt's int) and the results are combined into a
    local tensor (or ts.LocalInt); elsewhere it is called as it is. See ts.run_per_rank."""

    @_functools.wraps(func)
    def run_for_each_rank(*args, **kwargs):
        return run_per_rank(func, *args, **kwargs)

    return run_for_each_rank
