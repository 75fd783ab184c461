"""torch.distributed.device_mesh's names."""
from tessera._tessera import DeviceMesh, init_device_mesh  # noqa: F401
