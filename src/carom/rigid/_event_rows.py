"""Contact events from two steps' contact tables (``event_rows``): begin and end by merging the sorted keys,
hits from the approach speeds; run after the step, only when events are asked for (``carom.rigid.events``).
"""
import numpy as np

from .._jit import njit, entry_njit


@entry_njit
def event_rows(old_keys, old_touch, keys, c_touch, c_count, c_step, approach, hit_threshold):
    """A step's events, computed after the step when someone asks for them (World.contact_events, handlers),
    not inside it: begin/end touch events by merging last step's and this step's sorted contact keys and
    touch flags, and hit events: solved contacts whose fastest approach speed −v_n (before the solve,
    ``approach`` from the solver) at a point that received an impulse in the step (``c_step``) exceeds
    ``hit_threshold`` (point 1 is the hit's only if strictly faster than point 0).
    Returns (begin rows of the new table, end rows of the old table, hit rows, hit point index, hit speed);
    hits are in key order. An empty ``approach`` means nothing was solved."""
    K = keys.shape[0]
    n_old = old_keys.shape[0]
    begin = np.empty(K, np.int64)
    end = np.empty(n_old, np.int64)
    nb = 0
    ne = 0
    i = 0
    j = 0
    while i < K or j < n_old:
        if j >= n_old or (i < K and keys[i] < old_keys[j]):
            if c_touch[i]:
                begin[nb] = i
                nb += 1
            i += 1
        elif i >= K or old_keys[j] < keys[i]:
            if old_touch[j]:
                end[ne] = j
                ne += 1
            j += 1
        else:
            if c_touch[i] and not old_touch[j]:
                begin[nb] = i
                nb += 1
            elif old_touch[j] and not c_touch[i]:
                end[ne] = j
                ne += 1
            i += 1
            j += 1
    H = approach.shape[0]
    hit_k = np.empty(H, np.int64)
    hit_p = np.empty(H, np.int64)
    hit_v = np.empty(H)
    nh = 0
    for k in range(H):
        speed = -np.inf
        point = -1
        if c_count[k] > 0 and c_step[k, 0, 0] > 0.0:
            speed = approach[k, 0]
            point = 0
        if c_count[k] > 1 and c_step[k, 1, 0] > 0.0 and approach[k, 1] > speed:
            speed = approach[k, 1]
            point = 1
        if speed > hit_threshold:
            hit_k[nh] = k
            hit_p[nh] = point
            hit_v[nh] = speed
            nh += 1
    return begin[:nb], end[:ne], hit_k[:nh], hit_p[:nh], hit_v[:nh]


@njit
def no_hits():
    """The approach speeds of a step that solved nothing."""
    return np.empty((0, 2))
