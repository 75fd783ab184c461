"""torch.optim's names: SGD, AdamW and tessera.optim.lr_scheduler."""
from tessera._tessera.optim import AdamW, Optimizer, SGD  # noqa: F401

from . import lr_scheduler  # noqa: F401,E402
