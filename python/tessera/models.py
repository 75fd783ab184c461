"""The reference Llama-style Transformer (torchtitan's module and parameter names) and its args."""
from tessera._tessera.models import (  # noqa: F401
    Attention, FeedForward, Transformer, TransformerArgs, TransformerBlock, TransformerStage)
from tessera._tessera.parallel import transformer_tp_plan  # noqa: F401
