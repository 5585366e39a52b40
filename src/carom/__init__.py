"""carom: a fast 2D physics engine for Python (NumPy in and out, Numba-compiled kernels)."""
from ._jit import announce_compile as _announce_compile
from .errors import CaromError, GeometryError, WorldLockedError, StaleHandleError, SimulationError
from . import constants, geometry
from .rigid import World, Body, ShapeHandle
from . import verlet

__version__ = "0.1.0"
_announce_compile()
