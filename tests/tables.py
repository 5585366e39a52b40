"""A world's contact table as state to compare: every member as it is, except the cache rows the narrow phase
left unwritten, which hold whatever the memory held (carom.rigid._step, the contact cache): those of pairs of
two circles, which it neither reads nor writes, and those it marked as holding no manifold (cos and sin 0)."""
import numpy as np
from carom.rigid.events import contacts_to_save


def contact_state(w):
    """Copies of the members of w's contact table, with the unwritten cache rows zeroed (as a snapshot saves
    them: ``carom.rigid.events.contacts_to_save``, which test_world_services checks on its own)."""
    return [np.array(a, copy=True) for a in contacts_to_save(w.tables)]


def assert_same_contacts(a, b):
    """Worlds a and b have bitwise the same contact tables (``contact_state``)."""
    for i, (x, y) in enumerate(zip(contact_state(a), contact_state(b))):
        np.testing.assert_array_equal(x, y, err_msg=f"contact table member {i}")
