"""Impulse-based rigid-body world."""
from .world import World, Body, ShapeHandle
