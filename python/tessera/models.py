"""The reference Llama-style Transformer (torchtitan's module and parameter names) and its args."""
from tessera._tessera.models import Attention, FeedForward, Transformer, TransformerArgs, TransformerBlock  # noqa: F401
from tessera._tessera.parallel import transformer_tp_plan  # noqa: F401
