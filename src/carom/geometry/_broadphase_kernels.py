"""The compiled kernels of the broad phases, one module per structure, gathered under their old name (see :mod:`carom.geometry.broadphase` for the signatures and the
array layout). Everything here is a plain ``njit`` function over NumPy arrays and scalars, so a compiled
world step can call it directly; nothing recurses (trees are walked with explicit stacks).

Shared proxy storage (``n`` = high-water mark of ids ever used):

* ``lower``, ``upper`` — ``float64 (cap, 2)``: the real box of every proxy (closed intervals).
* ``flags`` — ``int8 (cap,)``: ``FREE`` (0), ``MOVING`` (1) or ``STATIC`` (2).

A pair is reported once as ``(i, j)``, ``i < j``, when the real boxes overlap with touching counting and
not both proxies are static. Pairs are collected as the single integer ``i * n + j`` (``n`` > every id),
so sorting the integers sorts the rows lexicographically.

They live in ``_pairs`` (shared pieces), ``_brute``, ``_sap``, ``_tree`` (storage and upkeep), ``_tree_query``
(walks, queries, ray casts), ``_tree_pairs`` (the world step's pair finder) and ``_grid``; this module
re-exports every name so older imports keep working.
"""
from ._pairs import (  # noqa: F401
    FREE, MOVING, STATIC, _push, _slab, finish_pairs, order_by_key_then_id, order_hits, overlap, ray_box_fraction,
    set_boxes, unpack_keys)
from ._brute import (  # noqa: F401
    brute_pairs, brute_query, brute_raycast)
from ._sap import (  # noqa: F401
    SAP_AXIS_HYSTERESIS, SAP_SHIFT_BUDGET, sap_pairs, sap_sort)
from ._tree import (  # noqa: F401
    REFIT_AFTER, REFIT_QUALITY_FACTOR, SWEEP_FRACTION, Tree, _QUALITY_UNIT, _tree_enlarge_leaf, _fat_box, _fat_box_keeps, _fit, _perimeter,
    _radix_order, _refit_inner, _replace_child, _tree_alloc, _tree_balance, _tree_free, _tree_insert_leaf,
    _tree_remove_leaf, mark_moved, tree_create_leaf, tree_destroy_leaf, tree_destroy_leaves, tree_fit, tree_grow, tree_insert_pending,
    tree_move_leaf, tree_new, tree_rebuild, tree_refit_or_rebuild, tree_update, fat_boxes_run, move_leaves)
from ._tree_query import (  # noqa: F401
    _boxes_walk, _tree_collect, _tree_ray, _tree_walk, _walk_room, tree_pairs, tree_query, tree_query_boxes,
    tree_raycast)
from ._tree_pairs import (  # noqa: F401
    FEW_MOVING, GRID_BIN_LIMIT, GRID_PARALLEL_ENTRIES, GRID_SCAN_COVER, GRID_SIZE_SAMPLES, KEY_STRIDE, STALE_SCAN_LIMIT,
    _CELL_LIMIT, _KEY_MASK, _KEY_SHIFT, _counting_sort, _cross_pairs, _cross_scan, _grid_entry_pairs,
    _grid_entry_pairs_split, _grid_entry_part, _grid_entry_parts, _grid_entry_run, _grown, _insertion_sort,
    _keys_in_order, _pairs_by_grid, _partition, _proxies_of, _query_box, _sample_median, _sort_range, _sorted_keys,
    _static_boxes, _static_cells_run, _static_cells_pairs, _static_grid_pairs,
    _unmoved_pairs, tree_pairs_cached, tree_update_threads, tree_parts, unmoved_run, joined_parts, broad_apart,
    apart_args, apart_types, run_parts, PARALLEL_ITEMS, PARALLEL_BOXES, FAT_BOXES, UNMOVED_PAIRS, GRID, MERGE, merge_run, merge_part,
    joined_merge)
from ._grid import (  # noqa: F401
    _CELL_CLAMP, _GRID_HASH_LOAD, _cell_range, _hash, _is_oversize, _owner_cell, _slot, cell_of, grid_build,
    grid_choose_cell, grid_pairs)
