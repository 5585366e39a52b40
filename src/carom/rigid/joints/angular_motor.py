"""Angular motor (pymunk's SimpleMotor): keeps the relative angular velocity ωB − ωA at ``speed`` with a torque
of at most ``max_torque`` (Ċ − speed, |λ| ≤ max torque × h)."""
from ..._jit import njit
from ._common import solve_row, apply_row

REF, SPEED, MAX_TORQUE = range(3)
MOTOR = 0


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    pass


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if mode == 0:
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, MOTOR])
        return
    m = param[j, MAX_TORQUE] * h
    imp[j, MOTOR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, MOTOR], -param[j, SPEED], 1.0, 0.0, -m, m)


@njit
def reaction(j, rows, param, imp, g):
    return 0.0, 0.0, imp[j, MOTOR]
