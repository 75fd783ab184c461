"""torch.nn.utils's names: clip_grad_norm_."""
from tessera._tessera.nn.utils import clip_grad_norm_  # noqa: F401
