"""carom.batch: many independent rigid worlds stepped by one compiled call (:class:`WorldBatch`)."""
from .world_batch import BatchState, WorldBatch

__all__ = ["WorldBatch", "BatchState"]
