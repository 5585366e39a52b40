"""Type aliases of the public signatures (for annotations only; nothing here runs in a step).

carom takes plain Python sequences and NumPy arrays alike wherever it takes numbers in a shape: each value is
checked (and converted) by the one validator before anything changes, so the aliases say what may be passed,
and the validators say what is accepted.
"""
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

#: A point or a vector: an (x, y) pair (a tuple, a list or a NumPy array of 2 numbers).
Vec2 = Union[Tuple[float, float], Sequence[float], np.ndarray]
#: An (n, 2) array of points, or anything NumPy turns into one (a list of pairs).
Points = ArrayLike
#: A per-body column: n numbers (a list or a NumPy array).
Values = ArrayLike
#: 64 category or mask bits (a Python int or a NumPy integer).
Bits = Union[int, np.integer]
#: A shape's placement: a :class:`carom.geometry.Transform`, an (x, y) pair, an (x, y, angle) triple, or None
#: (the identity) where a function says so.
TransformLike = Union[Any, Tuple[float, float], Tuple[float, float, float], None]
#: An RGB colour, 0-255 each.
Colour = Tuple[int, int, int]

__all__ = ["Vec2", "Points", "Values", "Bits", "TransformLike", "Colour", "ArrayLike", "Optional", "Any"]
