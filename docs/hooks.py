"""MkDocs hook: docstrings use Sphinx roles (``:func:`collide```); in the rendered API reference the role's
name is dropped and the code name kept, so the pages read ``collide`` rather than ``:func:collide``."""
import re

ROLE = re.compile(r":(?:py:)?(?:attr|meth|func|class|mod|data|exc|obj):(?=<code>)")


def on_page_content(html, **kwargs):
    """Remove the Sphinx role names in front of code names."""
    return ROLE.sub("", html)
