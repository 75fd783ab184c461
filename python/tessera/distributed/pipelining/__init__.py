"""torch.distributed.pipelining's names: PipelineStage and the schedules, run in rank programs
(tessera.spawn)."""
from tessera._tessera.pipelining import (  # noqa: F401
    PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B, ScheduleInterleavedZeroBubble,
    ScheduleZBVZeroBubble)
