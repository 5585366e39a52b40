"""Revolute joint (Box2D's revolute, pymunk's PivotJoint): anchor B held on anchor A, the bodies free to turn
about it, with an optional limit on the relative angle, a motor and a rotational spring.

Solved, as Box2D does, spring first, then motor, then limits, then the point (so the point constraint has the
last word): spring Ċ = ωB − ωA with bias β·(θ − target); motor Ċ − speed with |λ| ≤ max torque × h; lower limit
C = θ − lower ≥ 0, upper C = upper − θ ≥ 0; point d = 0 (``_rows.solve_point``)."""
from ..._jit import njit
from ._common import INF, G_ANG0, ROW_ANGLE, ROW_POINT, BIAS_RIGID, BIAS_LIMIT, BIAS_SPRING, BIAS_MOTOR, add_row

REF, LOWER, UPPER, MOTOR_SPEED, MAX_MOTOR_TORQUE, HERTZ, DAMPING_RATIO, TARGET = range(8)
# impulses: the point (x, y), spring, motor, lower, upper
PX, PY, SPRING, MOTOR, LOW, HIGH = range(6)


@njit
def is_plain(param, j):
    """Whether revolute joint j is only its point row (no spring, motor or limit): a plain point joint, which
    the step solves in vectors when both its bodies are dynamic (``_bundles``)."""
    return (param[j, HERTZ] == 0.0 and param[j, MAX_MOTOR_TORQUE] == 0.0 and param[j, LOWER] == -INF
            and param[j, UPPER] == INF)


@njit
def emit(j, param, imp, rows, r, h, g):
    """The rows, in the order solved: spring, motor, lower and upper limit (angles), the point last."""
    angle0 = g[G_ANG0]
    if param[j, HERTZ] > 0.0:
        r = add_row(rows, r, ROW_ANGLE, BIAS_SPRING, imp, j, float(SPRING), -INF, INF, angle0 - param[j, TARGET], 1.0,
                    1.0, param[j, HERTZ], param[j, DAMPING_RATIO], h)
    if param[j, MAX_MOTOR_TORQUE] > 0.0:
        m = param[j, MAX_MOTOR_TORQUE] * h
        r = add_row(rows, r, ROW_ANGLE, BIAS_MOTOR, imp, j, float(MOTOR), -m, m, -param[j, MOTOR_SPEED], 1.0, 1.0,
                    0.0, 0.0, h)
    if param[j, LOWER] > -INF:
        r = add_row(rows, r, ROW_ANGLE, BIAS_LIMIT, imp, j, float(LOW), 0.0, INF, angle0 - param[j, LOWER], 1.0, 1.0,
                    0.0, 0.0, h)
    if param[j, UPPER] < INF:
        r = add_row(rows, r, ROW_ANGLE, BIAS_LIMIT, imp, j, float(HIGH), 0.0, INF, param[j, UPPER] - angle0, -1.0,
                    -1.0, 0.0, 0.0, h)
    return add_row(rows, r, ROW_POINT, BIAS_RIGID, imp, j, float(PX), 0.0, INF, 0.0, 0.0, 0.0, 0.0, 0.0, h)
