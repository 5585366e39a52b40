"""A world's contact table as state to compare: every member as it is, except the cache rows of pairs of two
circles, which the narrow phase neither reads nor writes (carom.rigid._step, the contact cache), so they hold
whatever the memory held."""
import numpy as np

from carom.rigid import _step


def contact_state(w):
    """Copies of the members of w's contact table, with the two-circle pairs' cache rows zeroed."""
    members = [np.array(a, copy=True) for a in w._contacts]
    keys = w._contacts[0]
    circles = (w._s_count[keys >> 32] == 1) & (w._s_count[keys & 0xFFFFFFFF] == 1)
    members[_step.CACHE][circles] = 0.0
    return members


def assert_same_contacts(a, b):
    """Worlds a and b have bitwise the same contact tables (``contact_state``)."""
    for i, (x, y) in enumerate(zip(contact_state(a), contact_state(b))):
        np.testing.assert_array_equal(x, y, err_msg=f"contact table member {i}")
