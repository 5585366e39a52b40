"""carom's exceptions.

Every bad input raises a subclass of :class:`CaromError` whose message names the offending value, and the
object it was given to is left exactly as it was (validation happens before any state changes).
"""


class CaromError(Exception):
    """Base class of every error carom raises on purpose."""


class GeometryError(CaromError, ValueError):
    """A shape, outline or geometric argument is invalid (NaN, non-positive size, degenerate polygon, ...).

    Also a ``ValueError`` so that generic code catching bad values keeps working.
    """


class WorldLockedError(CaromError, RuntimeError):
    """The world was changed while it was stepping (bodies and shapes may change only between steps)."""


class StaleHandleError(CaromError, LookupError):
    """A handle refers to a body or shape that has been removed; it never aliases a newer object."""


class SimulationError(CaromError, ValueError):
    """A world or body argument is invalid (bad dt, NaN velocity, negative damping, zero-mass dynamic body)."""


class SnapshotError(CaromError, ValueError):
    """Bytes handed to ``World.restore`` (or unpickled as a world) are not a valid snapshot: wrong header or
    version, damaged, truncated, or holding a state no world can be in (an index out of range, a NaN, ...).

    The message names the first problem found; nothing is built from a snapshot until all of it is checked.
    """


class MissingDependencyError(CaromError, ImportError):
    """An optional library carom needs for this call is not installed (pygame-ce, pillow or matplotlib for
    pictures: ``pip install carom[viz]``). Also an ``ImportError``, so code that falls back on a missing
    library keeps working."""
