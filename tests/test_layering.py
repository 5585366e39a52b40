"""The package's rooms keep to their floors: read every import statement of ``src/carom`` (ast, the sources only,
nothing imported) and check that no module imports one of a higher layer and that no two modules import each other,
directly or round a longer circle. The layers are the ones of docs/architecture.md ("The layers"); a module added
to the package without a layer fails here until it is given one.

Imports inside functions count (they run later, but they tie the two modules together all the same); imports under
``if TYPE_CHECKING:`` do not (annotations only, never run).
"""
import ast
import pathlib

import pytest

import carom

ROOT = pathlib.Path(carom.__file__).parent

#: the package's layers, lowest first: a module may import its own layer's modules and those below, never above.
#: Names are module paths below ``carom`` ("" is ``carom/__init__.py``); a name covers its package's modules
#: unless a longer name says otherwise.
PACKAGE_LAYERS = (
    ("base", ("constants", "errors", "_types", "_args", "_linked_stamp", "_cpu_level", "_jit", "_simd", "_validate")),
    ("geometry", ("geometry",)),
    ("worlds", ("rigid", "verlet")),
    ("many worlds", ("batch",)),
    ("public API", ("",)),
    ("users of the API", ("scenes", "envs")),
    ("presentation", ("render",)),
    ("tools", ("cli", "bench", "_warmup")),
)

#: rigid's rooms, lowest first (docs/architecture.md): the compiled stages, then the Python side from the tables up
#: to the world. The compiled stages never import a Python room (handles, tables, world).
RIGID_LAYERS = (
    ("compiled stages", ("rigid._*", "rigid.presolve", "rigid.joints.*")),
    ("contacts seen from Python", ("rigid.events",)),
    ("tables", ("rigid.tables",)),
    ("mass", ("rigid.mass",)),
    ("queries", ("rigid.queries",)),
    ("shapes", ("rigid.shape",)),
    ("bodies", ("rigid.body",)),
    ("many bodies at once", ("rigid.bulk",)),
    ("joints", ("rigid.joints", "rigid.joints.bookkeeping", "rigid.joints.many")),
    ("snapshots", ("rigid.snapshot",)),
    ("world", ("rigid.world",)),
    ("rigid's face", ("rigid",)),
)


def module_names():
    """Every module of the package as a dotted path below ``carom`` ("" for the package itself)."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_only(node):
    test = node.test
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree):
    """The import statements of a module, skipping those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            stack.append(child)


def imports_of(name, path, modules):
    """The modules of the package that module ``name`` imports (dotted paths below ``carom``)."""
    is_package = path.name == "__init__.py"
    package = name.split(".") if is_package else name.split(".")[:-1]
    if name == "":
        package = []
    found = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name.split(".") for a in node.names]
            targets = [t[1:] for t in targets if t[0] == "carom"]
        else:
            if node.level:
                base = package[:len(package) - node.level + 1]
            else:
                if (node.module or "").split(".")[0] != "carom":
                    continue
                base = []
            mod = (node.module or "").split(".") if node.module else []
            if not node.level:
                mod = mod[1:]
            target = base + mod
            targets = []
            for alias in node.names:
                sub = ".".join(target + [alias.name])
                targets.append(sub.split(".") if sub in modules else target)
        for t in targets:
            t = ".".join(t)
            while t not in modules and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in modules and t != name:
                found.add(t)
    return found


def _layer_of(name, layers):
    """(rank, layer name) of module ``name`` in ``layers``: the longest entry that covers it."""
    best = None
    for rank, (layer, entries) in enumerate(layers):
        for entry in entries:
            if entry.endswith("*"):           # every module whose name goes on from the prefix
                covers = name.startswith(entry[:-1])
                length = len(entry)
            else:                             # the module, or a package and everything below it
                covers = name == entry or name.startswith(entry + ".")
                length = len(entry) + (name == entry)
            if covers and (best is None or length > best[0]):
                best = (length, rank, layer)
    return None if best is None else best[1:]


def package_layer(name):
    return _layer_of(name, PACKAGE_LAYERS) if name else (3, "public API")


def rigid_layer(name):
    return _layer_of(name, RIGID_LAYERS)


def import_graph():
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer_violations(graph):
    """Every import of a module of a higher layer, as readable lines."""
    bad = []
    for name, targets in sorted(graph.items()):
        mine = package_layer(name)
        for t in sorted(targets):
            theirs = package_layer(t)
            if theirs[0] > mine[0]:
                bad.append(f"carom.{name} ({mine[1]}) imports carom.{t} ({theirs[1]}), a higher layer")
            if name.startswith("rigid") and t.startswith("rigid"):
                a, b = rigid_layer(name), rigid_layer(t)
                if b[0] > a[0]:
                    bad.append(f"carom.{name} ({a[1]}) imports carom.{t} ({b[1]}), a higher room of rigid")
    return bad


def circles(graph):
    """The import circles (strongly connected components of more than one module), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


GRAPH = import_graph()


def test_the_reader_sees_the_imports():
    # (a reader that found nothing would pass everything)
    assert "rigid.tables" in GRAPH["rigid.world"] and "rigid._step" in GRAPH["rigid.world"]
    assert "geometry.broadphase" in GRAPH["rigid.tables"]
    assert "rigid.joints._common" in GRAPH["rigid._sleep"] and "rigid._narrow" in GRAPH["rigid._step"]
    assert "render" in GRAPH["cli"] or any(t.startswith("render") for t in GRAPH["cli"])
    assert len(GRAPH) > 60


def test_every_module_has_a_layer():
    missing = [name for name in GRAPH if package_layer(name) is None
               or name.startswith("rigid") and rigid_layer(name) is None]
    assert not missing, f"modules without a layer (add them to PACKAGE_LAYERS / RIGID_LAYERS): {missing}"


def test_no_module_imports_a_higher_layer():
    bad = layer_violations(GRAPH)
    assert not bad, "\n".join(bad)


def test_geometry_never_imports_a_world():
    bad = [(n, t) for n, ts in GRAPH.items() if n.startswith("geometry") for t in ts
           if not (t.startswith("geometry") or package_layer(t)[0] == 0)]
    assert not bad, bad


def test_rigid_compiled_stages_never_import_its_python_rooms():
    compiled = [n for n in GRAPH if n.startswith("rigid") and rigid_layer(n)[0] == 0]
    assert "rigid._step" in compiled and "rigid._solver" in compiled and "rigid.joints._solve" in compiled
    bad = [(n, t) for n in compiled for t in GRAPH[n] if t.startswith("rigid") and rigid_layer(t)[0] != 0]
    assert not bad, bad


def test_no_import_circles():
    found = circles(GRAPH)
    assert not found, "import circles: " + "; ".join(" <-> ".join(f"carom.{m}" for m in c) for c in found)


@pytest.mark.parametrize("planted", [("geometry.shapes", "rigid.world"), ("rigid._step", "rigid.body"),
                                     ("rigid.tables", "rigid.world")])
def test_a_planted_back_import_is_found(planted):
    """The checks fail on a graph with one import planted the wrong way (a lower room importing a higher one,
    which here also closes a circle)."""
    graph = {k: set(v) for k, v in GRAPH.items()}
    low, high = planted
    graph[low].add(high)
    assert layer_violations(graph)
    assert circles(graph)
