"""A world's contact table as state to compare: every member as it is, except the cache rows the narrow phase
left unwritten, which hold whatever the memory held (carom.rigid._step, the contact cache): those of pairs of
two circles, which it neither reads nor writes, and those it marked as holding no manifold (cos and sin 0)."""
import numpy as np
from carom.rigid.events import contacts_to_save


def contact_state(w):
    """A copy of w's contact table (a ``ContactTable``), with the unwritten cache rows zeroed (as a snapshot saves
    them: ``carom.rigid.events.contacts_to_save``, which test_world_services checks on its own)."""
    c = contacts_to_save(w.tables)
    return type(c)(*(np.array(a, copy=True) for a in c))


def assert_same_contacts(a, b):
    """Worlds a and b have bitwise the same contact tables (``contact_state``)."""
    x, y = contact_state(a), contact_state(b)
    for name in x._fields:
        np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=f"contact table field {name}")
