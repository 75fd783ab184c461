"""torch.optim.lr_scheduler's names: LinearLR, CosineAnnealingLR, LambdaLR."""
from tessera._tessera.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, LinearLR, LRScheduler  # noqa: F401
