"""torch.distributed's names: the collectives (tessera.dist), ReduceOp / ProcessGroup and the default
process group's lifecycle (init_process_group("fake", rank=, world_size=), is_initialized, ...)."""
from tessera._tessera import ProcessGroup, ReduceOp  # noqa: F401
from tessera._tessera.dist import *  # noqa: F401,F403

from . import (_composable, _local_tensor, checkpoint, device_mesh, distributed_c10d, fsdp, pipelining,  # noqa: F401
               tensor)
