"""torch.distributed.fsdp's names: fully_shard (FSDP2) and MixedPrecisionPolicy."""
from tessera._tessera.parallel import MixedPrecisionPolicy, fully_shard  # noqa: F401
