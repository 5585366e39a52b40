"""Distance joint (Box2D's distance joint and rope, pymunk's PinJoint, SlideJoint and DampedSpring): the
distance between the anchors, along u = d/|d|, with the row Jacobian jA = u, jaw = rA × u, jB = u, jbw = rB × u.

- rigid (no spring, min = max): C = |d| − length, two-sided;
- spring (hertz > 0): C = |d| − length with the user's softness, λ within [lower force, upper force] × h;
- limits (min < max): C = |d| − min ≥ 0 and C = max − |d| ≥ 0 (a rope is min 0);
- motor: Ċ − speed with |λ| ≤ max force × h."""
from ..._jit import njit
from ._common import INF, ROW_LENGTH, BIAS_RIGID, BIAS_LIMIT, BIAS_SPRING, BIAS_MOTOR, add_row

REF, LENGTH, MIN_LENGTH, MAX_LENGTH, HERTZ, DAMPING_RATIO, LOWER_FORCE, UPPER_FORCE, MOTOR_SPEED, MAX_MOTOR_FORCE = \
    range(10)
AXIAL, LOW, HIGH, MOTOR = range(4)


@njit
def emit(j, param, imp, rows, r, h, g):
    """The rows along the anchors' line (``_rows``' LENGTH rows): one rigid row, or spring, motor, lower and
    upper limit."""
    lo_len, hi_len = param[j, MIN_LENGTH], param[j, MAX_LENGTH]
    spring = param[j, HERTZ] > 0.0
    if not spring and lo_len == hi_len:
        return add_row(rows, r, ROW_LENGTH, BIAS_RIGID, imp, j, float(AXIAL), -INF, INF, param[j, LENGTH], 1.0, 0.0,
                       0.0, 0.0, h)
    if spring:
        r = add_row(rows, r, ROW_LENGTH, BIAS_SPRING, imp, j, float(AXIAL), param[j, LOWER_FORCE] * h, param[j,
                    UPPER_FORCE] * h, param[j, LENGTH], 1.0, 0.0, param[j, HERTZ], param[j, DAMPING_RATIO], h)
    if param[j, MAX_MOTOR_FORCE] > 0.0:
        m = param[j, MAX_MOTOR_FORCE] * h
        r = add_row(rows, r, ROW_LENGTH, BIAS_MOTOR, imp, j, float(MOTOR), -m, m, -param[j, MOTOR_SPEED], 1.0, 0.0,
                    0.0, 0.0, h)
    if lo_len > 0.0:
        r = add_row(rows, r, ROW_LENGTH, BIAS_LIMIT, imp, j, float(LOW), 0.0, INF, lo_len, 1.0, 0.0, 0.0, 0.0, h)
    if hi_len < INF:
        r = add_row(rows, r, ROW_LENGTH, BIAS_LIMIT, imp, j, float(HIGH), 0.0, INF, hi_len, -1.0, 0.0, 0.0, 0.0, h)
    return r
