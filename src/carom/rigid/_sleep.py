"""The sleep stage (``sleep_stage``): islands of bodies that stayed slow long enough fall asleep together
(union-find over the solved body pairs and the joints); and ``wake_jointed``: a joint's bodies sleep and wake
together.
"""
import math

import numpy as np

from .._jit import njit, deref
from ..constants import SLEEP_TIME
from .joints._common import FILTER
from ._layout import KINEMATIC, DYNAMIC


@njit
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit
def sleep_stage(dt, sleep_enabled, bodies, reach, awake, pair, joints):
    """Islands and sleep (Box2D's rule): a body is slow while |v| + |ω|·reach < its ``Body.sleep_threshold``
    (SLEEP_LINEAR_TOLERANCE unless set); an
    island (bodies joined by solved contacts and by joints; static bodies do not join) whose slowest-to-settle
    body has
    been slow for SLEEP_TIME falls asleep as a whole: velocities zeroed, labelled by its smallest body index.
    A body touching a moving kinematic body never sleeps, nor does one whose ``Body.sleep_enabled`` is off
    (``can_sleep``: its time stays 0, which keeps its whole island awake)."""
    bodies = deref(bodies)
    vel, angvel, kind, body_alive, asleep, sleep_time, island = (bodies.vel, bodies.angvel, bodies.kind, bodies.alive,
                                                                 bodies.asleep, bodies.sleep_time, bodies.island)
    can_sleep, sleep_threshold = bodies.can_sleep, bodies.sleep_threshold
    NB = vel.shape[0]
    if not sleep_enabled:
        for b in range(NB):
            sleep_time[b] = 0.0
        return
    # the longest time slow of an awake dynamic body, and whether a kinematic body moves: an island falls asleep
    # when its shortest time reaches SLEEP_TIME, so while the longest is below it no island can, and the islands
    # are not needed (a churning scene's union-find over every solved pair was 0.15-0.2 ms a step: the spinner,
    # the smash, the rain); the bodies touching a moving kinematic body are still held awake
    longest = 0.0
    moving_kinematic = False
    for b in range(NB):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            sp = math.sqrt(vel[b, 0] ** 2 + vel[b, 1] ** 2) + abs(angvel[b]) * reach[b]
            if sp > sleep_threshold[b] or not can_sleep[b]:
                sleep_time[b] = 0.0
            else:
                sleep_time[b] += dt
            longest = max(longest, sleep_time[b])
        elif kind[b] == KINEMATIC and awake[b]:
            moving_kinematic = True
    islands = longest >= SLEEP_TIME
    if not (islands or moving_kinematic):
        return
    parent = np.arange(NB if islands else 0)
    P = pair.shape[0]
    jkind, jactive, jbody = joints.kind, joints.active, joints.body
    for i in range(P + jkind.shape[0]):
        if i < P:
            ba = pair[i, 0]
            bb = pair[i, 1]
        else:
            j = i - P
            if not jactive[j] or jkind[j] == FILTER:
                continue
            ba = jbody[j, 0]
            bb = jbody[j, 1]
        if kind[ba] == KINEMATIC and awake[ba]:
            sleep_time[bb] = 0.0
        if kind[bb] == KINEMATIC and awake[bb]:
            sleep_time[ba] = 0.0
        if not islands or kind[ba] != DYNAMIC or kind[bb] != DYNAMIC:
            continue
        ra = _find(parent, ba)
        rb = _find(parent, bb)
        if ra < rb:
            parent[rb] = ra
        elif rb < ra:
            parent[ra] = rb
    if not islands:
        return
    island_time = np.full(NB, np.inf)
    for b in range(NB):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            r = _find(parent, b)
            if sleep_time[b] < island_time[r]:
                island_time[r] = sleep_time[b]
    for b in range(NB):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            r = _find(parent, b)
            if island_time[r] >= SLEEP_TIME:
                asleep[b] = True
                island[b] = r
                vel[b, 0] = 0.0
                vel[b, 1] = 0.0
                angvel[b] = 0.0


@njit
def wake_jointed(bodies, joints):
    """Wake the sleeping islands a joint ties to a moving body (an awake dynamic body, or a kinematic body with a
    velocity), before anything else: a joint's bodies sleep and wake together. Repeated until nothing changes
    (an island woken here may be tied to another)."""
    bodies = deref(bodies)
    vel, angvel, kind, body_alive, asleep, sleep_time, island = (bodies.vel, bodies.angvel, bodies.kind, bodies.alive,
                                                                 bodies.asleep, bodies.sleep_time, bodies.island)
    jkind, jactive, jbody = joints.kind, joints.active, joints.body
    NB = kind.shape[0]
    changed = True
    while changed:
        changed = False
        for j in range(jkind.shape[0]):
            if not jactive[j] or jkind[j] == FILTER:
                continue
            for e in range(2):
                a = jbody[j, e]
                b = jbody[j, 1 - e]
                if not (asleep[a] and kind[a] == DYNAMIC):
                    continue
                moving = body_alive[b] and not asleep[b] and (kind[b] == DYNAMIC or (
                    kind[b] == KINEMATIC and (vel[b, 0] != 0.0 or vel[b, 1] != 0.0 or angvel[b] != 0.0)))
                if moving:
                    label = island[a]
                    for q in range(NB):
                        if body_alive[q] and asleep[q] and island[q] == label:
                            asleep[q] = False
                            sleep_time[q] = 0.0
                    changed = True
