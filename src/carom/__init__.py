"""carom: a fast 2D physics engine for Python (NumPy in and out, Numba-compiled kernels)."""
from ._jit import (announce_compile as _announce_compile, tune_allocator as _tune_allocator,
                   prefer_concurrent_threading_layer as _prefer_concurrent_threading_layer,
                   default_omp_spin as _default_omp_spin)
from .errors import (CaromError, GeometryError, WorldLockedError, StaleHandleError, SimulationError,
                     SnapshotError, MissingDependencyError)
from . import constants, geometry
from .rigid import World, Body, ShapeHandle, PRE_SOLVE_SIGNATURE, pre_solve_function
from .rigid import joints
from . import verlet

__version__ = "0.1.0"

__all__ = ["World", "Body", "ShapeHandle", "PRE_SOLVE_SIGNATURE", "pre_solve_function", "joints", "geometry",
           "verlet", "constants", "render", "set_num_threads", "get_num_threads", "cpu_level", "CaromError", "GeometryError",
           "WorldLockedError", "StaleHandleError", "SimulationError", "SnapshotError", "MissingDependencyError",
           "WorldBatch", "__version__"]

#: Subpackages imported on first use (``carom.render`` loads the drawing code, not pygame or matplotlib, and
#: only when a program touches it, so ``import carom`` stays as quick as the physics needs).
_LAZY = ("render", "scenes", "cli")


def __getattr__(name: str):
    """Import ``carom.render`` (and ``carom.scenes``) the first time they are used after ``import carom``."""
    if name == "WorldBatch":          # (carom.batch imports Numba's typed list: on first use only)
        from .batch import WorldBatch
        globals()[name] = WorldBatch
        return WorldBatch
    if name in _LAZY:
        import importlib
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'carom' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"WorldBatch"})


def set_num_threads(n: int, adaptive: bool = True) -> None:
    """Use ``n`` threads for the parallel stages of the rigid step (narrow phase, solver rows, coloured
    contact sweeps). Results are bitwise the same for every thread count. The solver's threads meet at
    barriers, which needs Numba's OpenMP or work-queue threading layer (carom asks for them before TBB);
    under TBB, chosen with NUMBA_THREADING_LAYER, a step runs in one thread.

    ``adaptive`` (the default): each world's thread governor times its steps and runs them in one thread
    while that is faster (another process busy on a core); ``adaptive=False`` holds the count: every step runs
    with ``n`` threads, for benchmarks and for users who know their machine. The environment variable
    ``CAROM_THREADS=n`` does the same as ``set_num_threads(n, adaptive=False)`` at the first step, unless the
    program calls ``set_num_threads`` first."""
    import numba
    from . import _jit
    top = numba.config.NUMBA_NUM_THREADS
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= top:
        raise CaromError(f"threads must be an integer from 1 to {top} (this machine), got {n!r}")
    if not isinstance(adaptive, bool):
        raise CaromError(f"adaptive must be True or False, got {adaptive!r}")
    _jit.hold_threads(n, adaptive)


def cpu_level() -> str:
    """The processor level carom's kernels are compiled for in this process: ``"x86-64-v3"`` (AVX2 and FMA)
    or ``"x86-64"`` (the baseline), whose compiled kernels a wheel ships, or ``"host"`` (Numba's default: this
    processor's own, compiled on first use). Chosen at import, best first, or by the environment variable
    ``CAROM_CPU_LEVEL`` (auto, host or a level). The setting is Numba's and process-wide: other Numba code
    compiled after ``import carom`` is compiled for the same level."""
    from . import _cpu_level
    return _cpu_level.level


def get_num_threads() -> int:
    """The number of threads the parallel stages use."""
    import numba
    return numba.get_num_threads()

_announce_compile()
_tune_allocator()
_prefer_concurrent_threading_layer()
_default_omp_spin()
