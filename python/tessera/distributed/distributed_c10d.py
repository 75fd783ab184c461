"""torch.distributed.distributed_c10d's names: the collectives and the default process group."""
from tessera._tessera import ProcessGroup, ReduceOp  # noqa: F401
from tessera._tessera.dist import *  # noqa: F401,F403
from tessera._tessera.dist import _get_default_group  # noqa: F401
