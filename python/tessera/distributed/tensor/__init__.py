"""torch.distributed.tensor's names."""
from tessera._tessera import (  # noqa: F401
    DeviceMesh,
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_tensor,
    init_device_mesh,
)

from . import debug, parallel  # noqa: F401
