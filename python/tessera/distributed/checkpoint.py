"""torch.distributed.checkpoint's names: save, async_save and load of state dicts (str -> ts.Tensor |
ts.DTensor | int | float | str), and consolidate (one .safetensors file) and inspect."""
from tessera._tessera.checkpoint import AsyncSave, async_save, consolidate, inspect, load, save  # noqa: F401
