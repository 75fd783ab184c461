"""torch.distributed._composable's names: replicate (DDP)."""
from tessera._tessera.parallel import replicate  # noqa: F401
