"""torch.distributed's names: the collectives (tessera.dist) and ReduceOp / ProcessGroup."""
from tessera._tessera import ProcessGroup, ReduceOp  # noqa: F401
from tessera._tessera.dist import *  # noqa: F401,F403

from . import checkpoint, device_mesh, tensor  # noqa: F401
