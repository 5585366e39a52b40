"""The freshness stamp of a kernel's cache entries: its own source file and every carom source file whose code it
may have linked in.

Numba stamps a source file's cache index with a hash of that file's contents and drops the index when the stamp
changes. A kernel's cache entry, though, holds the machine code of everything it calls and inlines, from other
files too: edit ``rigid/_prepare.py`` alone and the step's entry in ``rigid/_step.py``'s cache, its stamp
unchanged, went on loading the old prepare stage. Whoever updates a source checkout (a ``git pull`` that changes a
stage and not the step) or installs a new version over an old one's caches ran the old code, silently.

:class:`LinkedSourcesLocator` (a mixin for Numba's locators of carom's files: ``_cpu_level.install_locator``) stamps
each file with the pair (its own content hash, a hash of the contents of every carom module it imports,
transitively: ``reached_files``). A kernel can only call what its module reaches by imports, so an edit to any of
them drops the file's index and its kernels are compiled again; an edit to a module no kernel module imports (the
world's Python side, the environments, the scenes) drops nothing. The imports are read from the source text (every
``import`` and ``from … import`` line, wherever it stands: reading too many only drops an index more often), not
from the modules' namespaces, which grow as submodules are imported: the stamp must be the same in every process.
"""
import hashlib
import os
import re

#: the package whose modules are followed, and its folder
PACKAGE = __name__.rpartition(".")[0]
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

_FROM = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#]+)", re.MULTILINE)

#: file path -> (hash of its contents, the package files it imports)
_scanned: "dict[str, tuple[str, list[str]]]" = {}
#: file path -> the hash of the contents of every file it reaches (``reach_digest``)
_digests: "dict[str, str]" = {}


def _module_file(name):
    """The source file of the package's module ``name`` (a dotted name), or None."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    base = os.path.join(PACKAGE_DIR, *name.split(".")[1:])
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def _module_name(path):
    rel = os.path.relpath(os.path.abspath(path), PACKAGE_DIR)[:-len(".py")].split(os.sep)
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join([PACKAGE] + rel)


def _scan(path):
    """(hash of the file's contents, the package's files its import lines name)."""
    got = _scanned.get(path)
    if got is not None:
        return got
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", "replace")
    name = _module_name(path)
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    targets = set()
    for source, names in _FROM.findall(text):
        level = len(source) - len(source.lstrip("."))
        rest = source[level:]
        if level:
            base = package
            for _ in range(level - 1):
                base = base.rpartition(".")[0]
            module = base + ("." + rest if rest else "")
        else:
            module = rest
        # each name that is a module of its own, and the module named if some name is not one
        whole = False
        for item in names.strip("()").split(","):
            word = item.split("#")[0].split()
            if word and _module_file(module + "." + word[0]) is not None:
                targets.add(module + "." + word[0])
            elif word:
                whole = True
        if whole:
            targets.add(module)
    for names in _IMPORT.findall(text):
        for item in names.split(","):
            word = item.split()
            if word:
                targets.add(word[0])
    files = sorted({f for f in map(_module_file, targets) if f is not None} - {path})
    got = _scanned[path] = (hashlib.sha256(data).hexdigest(), files)
    return got


def reached_files(path):
    """The package's source files ``path`` reaches through import lines, transitively, itself included, sorted."""
    seen = {path}
    stack = [path]
    while stack:
        for f in _scan(stack.pop())[1]:
            if f not in seen:
                seen.add(f)
                stack.append(f)
    return sorted(seen)


def reach_digest(path):
    """A hash of the contents of every file ``path`` reaches (``reached_files``), once a process."""
    digest = _digests.get(path)
    if digest is None:
        h = hashlib.sha256()
        for f in reached_files(path):
            h.update(os.path.relpath(f, PACKAGE_DIR).encode())
            h.update(_scan(f)[0].encode())
        digest = _digests[path] = h.hexdigest()
    return digest


class LinkedStamp:
    """A cache index's stamp: (the file's own stamp, ``reach_digest`` of the file), the digest found when the stamp
    is first compared or pickled, at a first compile or cache load. (Numba asks for the stamp when a kernel is
    decorated, so an eager digest would read and hash the sixty-odd files the kernels reach, about 17 ms, in every
    process that imports carom, stepping or not.) Pickled as that plain pair, and equal to it."""

    def __init__(self, own, path):
        self._own = own
        self._path = path
        self._value = None

    def value(self):
        if self._value is None:
            self._value = (self._own, reach_digest(self._path))
        return self._value

    def __eq__(self, other):
        return self.value() == (other.value() if isinstance(other, LinkedStamp) else other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.value())

    def __reduce__(self):
        return tuple, (self.value(),)


class LinkedSourcesLocator:
    """Mixin for a Numba cache locator of functions in the package's own modules: stamps them with
    :class:`LinkedStamp`."""

    def get_source_stamp(self):
        return LinkedStamp(super().get_source_stamp(), os.path.abspath(self._py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        path = os.path.abspath(py_file)
        if not (path.startswith(PACKAGE_DIR + os.sep) and path.endswith(".py") and os.path.isfile(path)):
            return None
        return super().from_function(py_func, py_file)
