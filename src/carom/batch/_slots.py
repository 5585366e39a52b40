"""Reading and writing a world's entry of the batch's typed list of tables without a reference per array.

Why: an entry of the list (``_adapter.WorldStepTables``) holds about a hundred arrays. Numba's ``tables[i]``
takes a reference to each of them (an atomic increment, and a decrement when the name dies), and
``tables[i] = …`` takes a hundred more and drops the old entry's hundred: 1.8 µs for a read and 4 µs for a read
and a write back, measured over the LunarLander's worlds, where a whole world's step costs about 35 µs. Every
vector step read each world's entry three times (engines, step, observation) and wrote it once.

* :func:`borrowed_world` reads entry i as views that hold no reference (a null meminfo, as
  ``carom._jit.borrowed``): valid while the list holds the entry, so only inside the compiled call, and never
  stored or returned.
* :func:`world_parts` reads entry i borrowed, except its contact table and the broad phase's pair cache
  (``tree.cand``), which it returns apart with their references taken: the two parts a step hands back (the
  step may return last step's table or cache as they are), so what the step returns is always owned.
* :func:`put_results` writes a step's new contact table and pair cache into entry i in place: a reference
  taken on each new array, the old ones' dropped (in that order, so handing back the same arrays is safe).
  The rest of the entry (bodies, shapes, tree, joints: written in place by the step) is left as it is.

Without the JIT (``NUMBA_DISABLE_JIT=1``) these are the plain reads and writes of the list.
"""
from __future__ import annotations

import numba
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._jit import _without_owner
from . import _adapter

#: where the contact table and the pair cache sit in an entry: its field ``contacts``; its field ``tree``,
#: whose field ``cand`` is the cache
CONTACTS = _adapter.WorldStepTables._fields.index("contacts")
TREE = _adapter.WorldStepTables._fields.index("tree")


def _cand_field(tree_type) -> int:
    return list(tree_type.fields).index("cand")


def _owned_types(item_type):
    """(the contact table's type, the pair cache's field in the tree tuple, its type) of a world's entry: the two
    parts the step owns (module docstring)."""
    tree_type = item_type.types[TREE]
    cand = _cand_field(tree_type)
    return item_type.types[CONTACTS], cand, tree_type.types[cand]


if numba.config.DISABLE_JIT:
    def borrowed_world(tables, i):
        """Plain-Python stand-in: entry i."""
        return tables[i]

    def world_parts(tables, i):
        """Plain-Python stand-in: (entry i, its contact table, its pair cache)."""
        t = tables[i]
        return t, t.contacts, t.tree.cand

    def put_results(tables, i, contacts, cand):
        """Plain-Python stand-in: entry i with the new contact table and pair cache."""
        tables[i] = _adapter.with_results(tables[i], contacts, cand)
else:
    def _item_pointer(context, builder, list_type, lst, index):
        """A pointer to entry ``index`` of a typed list (no bounds check: the callers loop over its length)."""
        from numba.typed.listobject import _container_get_data, ll_list_type
        from llvmlite import ir
        fnty = ir.FunctionType(cgutils.voidptr_t, [ll_list_type])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_list_base_ptr")
        base = builder.call(fn, [_container_get_data(context, builder, list_type, lst)])
        item_type = context.get_data_type(list_type.item_type)
        return cgutils.gep(builder, builder.bitcast(base, item_type.as_pointer()), index)

    def _check_list(lst):
        return isinstance(lst, types.ListType) and isinstance(lst.item_type, types.BaseTuple)

    def _load(context, builder, list_type, lst, index):
        ptr = _item_pointer(context, builder, list_type, lst, index)
        model = context.data_model_manager[list_type.item_type]
        return ptr, model, model.load_from_data_pointer(builder, ptr)

    @intrinsic
    def borrowed_world(typingctx, tables, i):
        """Entry i of the typed list ``tables`` as views holding no reference (module docstring)."""
        if not (_check_list(tables) and isinstance(i, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            lst, index = args
            _, _, item = _load(context, builder, sig.args[0], lst, index)
            return _without_owner(context, builder, sig.return_type, item)
        return tables.item_type(tables, i), codegen

    @intrinsic
    def world_parts(typingctx, tables, i):
        """(entry i borrowed, its contact table, its pair cache), the last two with references (module
        docstring)."""
        if not (_check_list(tables) and isinstance(i, types.Integer)):
            return None
        item_type = tables.item_type
        contacts_type, cand, cand_type = _owned_types(item_type)
        sig = types.Tuple([item_type, contacts_type, cand_type])(tables, i)

        def codegen(context, builder, sig, args):
            lst, index = args
            _, _, item = _load(context, builder, sig.args[0], lst, index)
            contacts = builder.extract_value(item, CONTACTS)
            cache = builder.extract_value(builder.extract_value(item, TREE), cand)
            context.nrt.incref(builder, contacts_type, contacts)
            context.nrt.incref(builder, cand_type, cache)
            borrowed = _without_owner(context, builder, item_type, item)
            return context.make_tuple(builder, sig.return_type, [borrowed, contacts, cache])
        return sig, codegen

    @intrinsic
    def put_results(typingctx, tables, i, contacts, cand):
        """Entry i's contact table and pair cache replaced by ``contacts`` and ``cand`` (module docstring)."""
        if not (_check_list(tables) and isinstance(i, types.Integer)):
            return None
        item_type = tables.item_type
        contacts_type, field, cand_type = _owned_types(item_type)
        if contacts != contacts_type or cand != cand_type:
            return None

        def codegen(context, builder, sig, args):
            lst, index, new_contacts, new_cand = args
            ptr, model, item = _load(context, builder, sig.args[0], lst, index)
            old_contacts = builder.extract_value(item, CONTACTS)
            tree = builder.extract_value(item, TREE)
            old_cand = builder.extract_value(tree, field)
            context.nrt.incref(builder, contacts_type, new_contacts)
            context.nrt.incref(builder, cand_type, new_cand)
            item = builder.insert_value(item, new_contacts, CONTACTS)
            item = builder.insert_value(item, builder.insert_value(tree, new_cand, field), TREE)
            builder.store(model.as_data(builder, item), ptr)
            context.nrt.decref(builder, contacts_type, old_contacts)
            context.nrt.decref(builder, cand_type, old_cand)
            return context.get_dummy_value()
        return types.none(tables, i, contacts, cand), codegen
