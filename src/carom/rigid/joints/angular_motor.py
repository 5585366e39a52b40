"""Angular motor (pymunk's SimpleMotor): keeps the relative angular velocity ωB − ωA at ``speed`` with a torque
of at most ``max_torque`` (Ċ − speed, |λ| ≤ max torque × h)."""
from ..._jit import njit
from ._common import ROW_ANGLE, BIAS_MOTOR, add_row

REF, SPEED, MAX_TORQUE = range(3)
MOTOR = 0


@njit
def emit(j, param, imp, rows, r, h, g):
    m = param[j, MAX_TORQUE] * h
    return add_row(rows, r, ROW_ANGLE, BIAS_MOTOR, imp, j, float(MOTOR), -m, m, -param[j, SPEED], 1.0, 1.0, 0.0, 0.0, h)
