"""The optional picture libraries (the ``viz`` extra), imported only when a drawing call needs one.

A missing one raises :class:`carom.errors.MissingDependencyError` naming the package and the command that
installs it, instead of a bare ``ModuleNotFoundError`` from deep inside a drawing function.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import importlib

#: import name (its top-level package) -> the package pip installs it from
PACKAGES = {"pygame": "pygame-ce", "PIL": "pillow", "matplotlib": "matplotlib"}

INSTALL_HINT = "pip install carom[viz]"


def require(module: "str") -> "Any":
    """Import and return ``module`` (e.g. ``"PIL.ImageDraw"``); if its package is missing, raise
    MissingDependencyError naming the package and ``pip install carom[viz]``."""
    from ..errors import MissingDependencyError
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise                                   # the library is there; something it needs is not
        package = PACKAGES.get(top, top)
        raise MissingDependencyError(
            f"drawing needs {package}, which is not installed: {INSTALL_HINT} "
            f"(pygame-ce, pillow and matplotlib)") from exc
