"""Command-line argument types shared by ``carom`` (``cli.py``) and the examples (``render.player``): a picture
size ``WxH`` and a whole number >= 1, each refused with argparse's usual message."""
import argparse


def size(text):
    """``WxH`` (each 16 to 8192) as (w, h)."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 480x360, got {text!r}") from None
    if not (16 <= w <= 8192 and 16 <= h <= 8192):
        raise argparse.ArgumentTypeError(f"size must be between 16x16 and 8192x8192, got {text!r}")
    return w, h


def positive_int(text):
    """A whole number >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {text!r}")
    return v
