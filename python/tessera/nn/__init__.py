"""torch.nn's names: Module, Parameter, the built-in modules (Linear, Embedding, LayerNorm, RMSNorm,
Dropout, ReLU, Sequential, ModuleList), tessera.nn.functional and tessera.nn.utils."""
from tessera._tessera.nn import (  # noqa: F401
    Dropout, Embedding, LayerNorm, Linear, Module, ModuleList, Parameter, ReLU, RMSNorm, Sequential)

from . import functional, utils  # noqa: F401,E402
