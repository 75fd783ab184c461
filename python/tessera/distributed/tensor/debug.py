"""torch.distributed.tensor.debug's names: CommDebugMode is Tessera's CommCounter."""
from tessera._tessera import CommCounter, visualize_sharding  # noqa: F401

CommDebugMode = CommCounter
