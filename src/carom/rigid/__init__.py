"""Impulse-based rigid-body world."""
from .world import World, Body, ShapeHandle
from .presolve import PRE_SOLVE_SIGNATURE, pre_solve_function
