"""The code in the README and in the documentation runs: every ```python block of a page is executed in order, in
one namespace per page (a page's blocks build on each other), in a scratch directory. So none can go stale."""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")


def python_blocks(path):
    """The ```python fenced blocks of a Markdown file, in order."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def pages():
    out = [os.path.join(ROOT, "README.md")]
    for folder, _, files in os.walk(DOCS):
        out += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return sorted(p for p in out if python_blocks(p))


PAGES = pages()


def test_the_pages_with_code_are_found():
    names = {os.path.relpath(p, ROOT) for p in PAGES}
    assert "README.md" in names and "docs/getting-started.md" in names
    assert len(names) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: os.path.relpath(p, ROOT))
def test_page_code_runs(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("DISPLAY", raising=False)
    namespace = {"__name__": "__docs__"}
    for k, block in enumerate(python_blocks(page)):
        code = compile(block, f"{os.path.relpath(page, ROOT)} block {k + 1}", "exec")
        exec(code, namespace)


def test_the_units_page_explains_every_constant():
    import carom.constants as constants
    with open(os.path.join(DOCS, "units.md"), encoding="utf-8") as f:
        page = f.read()
    names = [n for n in dir(constants) if n.isupper()]
    assert len(names) >= 30
    missing = [n for n in names if f"`{n}`" not in page]
    assert not missing, missing


def test_the_readme_is_short_and_links_only_inside_the_repository():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) <= 80
    assert "make demo" in text and "make test" in text and "make clean-cache" in text
    links = re.findall(r"\]\(([^)\s]+)", text)
    assert len(links) >= 10
    for link in links:
        assert "://" not in link and not link.startswith(("/", "..")), link
        assert os.path.exists(os.path.join(ROOT, link.split("#")[0])), link
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert pictures and all(p.startswith("docs/gallery/") for p in pictures)   # made by an example
    example = python_blocks(os.path.join(ROOT, "README.md"))[0]
    assert len(example.strip().splitlines()) <= 10
