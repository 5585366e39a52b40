"""The one validator every number entering carom passes (worlds, bodies, shapes, shape constructors).

The rules are the same everywhere: a number is a Python or NumPy real scalar (or a 0-d numeric array),
never a bool or a string; it is finite; it lies in the range its use allows. A vector is two such numbers. A
flag is a Python or NumPy bool. Each check raises the error class it is given (``SimulationError`` for world
and body arguments, ``GeometryError`` for shapes) with a message that names the value, and returns the
value converted; callers check everything before they change anything, so a refused call changes nothing.
"""
import math
import numbers

import numpy as np

from .constants import WORLD_LIMIT
from .errors import SimulationError

_NUMERIC_KINDS = "iuf"
_BITS_END = 2 ** 64


def _is_real(value) -> bool:
    """A real number that is not a bool: Python int/float, NumPy integer/floating, a 0-d numeric array."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in _NUMERIC_KINDS
    return isinstance(value, numbers.Real)


def _range_text(low, high, low_open):
    def text(x):
        return str(x) if isinstance(x, int) else f"{x:g}"
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{text(low)}, {text(high)}]"
    if low is not None:
        return f"{'>' if low_open else '>='} {text(low)}"
    return f"<= {text(high)}"


def _limit_text(limit):
    return f"world limit {limit:g} m" if limit == WORLD_LIMIT else f"limit {limit:g}"


def number(value, name, low=None, high=None, low_open=False, magnitude=None, error=SimulationError) -> float:
    """``value`` as a float: a real number (not a bool or a string), finite, in [low, high] (or (low, high]
    with ``low_open``) and with ``|value| <= magnitude``."""
    if type(value) is not float and not _is_real(value):
        raise error(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError as exc:           # (an integer beyond the floats)
        raise error(f"{name} = {value!r} is not finite as a float") from exc
    if not math.isfinite(v):
        raise error(f"{name} = {v} is not finite")
    if (low is not None and (v < low or (low_open and v <= low))) or (high is not None and v > high):
        raise error(f"{name} must be {_range_text(low, high, low_open)}, got {v!r}")
    if magnitude is not None and abs(v) > magnitude:
        raise error(f"{name} = {v!r} is beyond the limit |{name}| <= {magnitude:g}")
    return v


def integer(value, name, low=None, high=None, error=SimulationError) -> int:
    """``value`` as an int: a Python or NumPy integer (not a bool), in [low, high]."""
    if type(value) is int:      # (the common case, without the abstract-class checks below: adding a shape
        v = value               # checks three integers, and those checks were a tenth of it)
        if (low is not None and v < low) or (high is not None and v > high):
            raise error(f"{name} must be an integer {_range_text(low, high, False)}, got {v!r}")
        return v
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise error(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise error(f"{name} must be an integer {_range_text(low, high, False)}, got {v!r}")
    return v


def flag(value, name, error=SimulationError) -> bool:
    """``value`` as a bool: only True/False (or NumPy's bools), so that ``bullet="no"`` is not taken as True."""
    if value is True or value is False:
        return value
    if not isinstance(value, (bool, np.bool_)):
        raise error(f"{name} must be True or False, got {value!r}")
    return bool(value)


def bits(value, name, error=SimulationError) -> np.uint64:
    """A 64-bit category or mask: a Python or NumPy integer in [0, 2**64)."""
    if type(value) is int and 0 <= value < _BITS_END:
        return np.uint64(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise error(f"{name} must be an integer bit set, got {value!r}")
    v = int(value)
    if not 0 <= v < 2 ** 64:
        raise error(f"{name} = {v} is not a 64-bit bit set (0 <= {name} < 2**64)")
    return np.uint64(v)


def _as_array(value, name, error):
    """A float64 array of the numbers in ``value`` (sequences are checked element by element: NumPy would
    turn True into 1.0 and "2" into 2.0)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _NUMERIC_KINDS:
            raise error(f"{name} must hold numbers, got {value!r}")
        arr = value
    elif isinstance(value, (tuple, list)):
        for v in value:
            if isinstance(v, (tuple, list, np.ndarray)) and not (isinstance(v, np.ndarray) and v.ndim == 0):
                _as_array(v, name, error)
            elif not _is_real(v):
                raise error(f"{name} must hold numbers, got {value!r}")
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise error(f"{name} must hold numbers, got {value!r}") from exc
        if arr.dtype.kind not in _NUMERIC_KINDS:
            raise error(f"{name} must hold numbers, got {value!r}")
    try:
        return np.array(arr, dtype=np.float64)
    except OverflowError as exc:           # (an integer beyond the floats)
        raise error(f"{name} = {value!r} is not finite as floats") from exc
    except (TypeError, ValueError) as exc:  # (ragged nesting)
        raise error(f"{name} must hold numbers, got {value!r}") from exc


def vector(value, name, limit=None, error=SimulationError) -> np.ndarray:
    """``value`` as a float64 array (x, y): two real numbers, finite, each within ``limit`` in size."""
    # two Python numbers, finite and within the limit, skip NumPy's conversion and checks (they were a third of
    # a point query's 14 us); anything else takes the general path, which also words the errors
    if type(value) in (tuple, list) and len(value) == 2 and type(value[0]) in (float, int) \
            and type(value[1]) in (float, int):
        try:
            x, y = float(value[0]), float(value[1])
        except OverflowError:
            pass
        else:
            if math.isfinite(x) and math.isfinite(y) and (limit is None or (abs(x) <= limit and abs(y) <= limit)):
                return np.array((x, y))
    arr = _as_array(value, name, error).reshape(-1)
    if arr.shape != (2,):
        raise error(f"{name} must be a vector (x, y), got {value!r}")
    if not np.isfinite(arr).all():
        raise error(f"{name} = {tuple(float(v) for v in arr)} is not finite")
    if limit is not None and np.abs(arr).max() > limit:
        raise error(f"{name} = {tuple(float(v) for v in arr)} is beyond the {_limit_text(limit)}")
    return arr


def points(value, name, limit=None, error=SimulationError) -> np.ndarray:
    """``value`` as a float64 (n, 2) array of finite points, each coordinate within ``limit``."""
    arr = _as_array(value, name, error)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise error(f"{name} must be an (n, 2) array of numbers, got shape {arr.shape}")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise error(f"{name}[{i}] = {tuple(float(v) for v in arr[i])} is not finite")
    if limit is not None and arr.size and np.abs(arr).max() > limit:
        raise error(f"{name} reach beyond the {_limit_text(limit)}")
    return np.ascontiguousarray(arr)


def values(value, name, low=None, high=None, magnitude=None, error=SimulationError) -> np.ndarray:
    """``value`` as a float64 1-d array of real numbers (not bools or strings), each finite, in [low, high] and
    with ``|v| <= magnitude`` (the rules of :func:`number`, for many values at once)."""
    arr = _as_array(value, name, error)
    if arr.ndim != 1:
        raise error(f"{name} must be a 1-d array of numbers, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if low is not None:
        bad |= arr < low
    if high is not None:
        bad |= arr > high
    if magnitude is not None:
        bad |= np.abs(arr) > magnitude
    if bad.any():
        i = int(np.argmax(bad))
        v = float(arr[i])
        if not math.isfinite(v):
            raise error(f"{name}[{i}] = {v} is not finite")
        if magnitude is not None and abs(v) > magnitude:
            raise error(f"{name}[{i}] = {v!r} is beyond the limit |{name}| <= {magnitude:g}")
        raise error(f"{name}[{i}] must be {_range_text(low, high, False)}, got {v!r}")
    return np.ascontiguousarray(arr)
