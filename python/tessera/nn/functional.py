"""torch.nn.functional's names: the transformer ops on ts.Tensor and ts.DTensor operands."""
from tessera._tessera.nn.functional import *  # noqa: F401,F403
