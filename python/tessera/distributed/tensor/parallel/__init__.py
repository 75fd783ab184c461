"""torch.distributed.tensor.parallel's names: parallelize_module, the parallel styles and
loss_parallel."""
from tessera._tessera.parallel import (  # noqa: F401
    ColwiseParallel, PrepareModuleInput, PrepareModuleOutput, RowwiseParallel, SequenceParallel, loss_parallel,
    parallelize_module)
