"""The link checker: every relative link of a notebook or Markdown file, and whether it leads somewhere.

Links are read from markdown cells and from the markdown/HTML outputs of code cells: ``[text](target)``,
``![alt](target)`` and ``href="target"`` / ``src="target"``. Web links (``http:``, ``https:``, ``mailto:``)
are not followed (the tests run offline). A target ``file#anchor`` must name an existing file, and the
anchor must exist in it: an explicit ``<a id=...>``/``<a name=...>``, or a heading, written as JupyterLab
makes heading ids (spaces → ``-``) or as GitHub does (lower case, punctuation dropped).
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import nbformat

from tests.helpers import REPO, load_tool

heading_anchor = load_tool("conventions").heading_anchor

# a destination may hold balanced parentheses (CommonMark): a contents link to "## 10 · Exercise (⭐⭐)"
MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?((?:[^()\s>]|\([^()\s>]*\))+)>?"
                     r"(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
HTML_ANCHOR = re.compile(r"""<a\s[^>]*(?:id|name)\s*=\s*["']([^"']+)["']""")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


def _texts(path: Path) -> list[str]:
    """The markdown a reader of ``path`` sees: markdown cells and markdown/HTML outputs (notebooks)."""
    if path.suffix != ".ipynb":
        return [path.read_text(encoding="utf-8")]
    nb = nbformat.read(path, as_version=4)
    texts = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            texts.append(cell.source)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for kind in ("text/markdown", "text/html"):
                if kind in data:
                    value = data[kind]
                    texts.append(value if isinstance(value, str) else "".join(value))
    return texts


def links(path: Path) -> list[str]:
    """The relative link targets in ``path`` (web links left out), in order of appearance."""
    found = []
    for text in _texts(path):
        text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)   # code blocks hold no links
        text = re.sub(r"`[^`\n]*`", "", text)                    # nor does inline code
        for target in [*MD_LINK.findall(text), *HTML_LINK.findall(text)]:
            if not EXTERNAL.match(target):
                found.append(target)
    return found


def _plain(heading: str) -> str:
    """A heading's text as it is shown: without markdown emphasis, code marks, links or HTML tags."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[*_`]", "", text).strip()


def anchors(path: Path) -> set[str]:
    """Every anchor a link into ``path`` may use."""
    found: set[str] = set()
    for text in _texts(path):
        found.update(HTML_ANCHOR.findall(text))
        for heading in HEADING.findall(text):
            plain = _plain(heading)
            found.add(plain.replace(" ", "-"))
            found.add(heading_anchor(heading))                                  # JupyterLab
            github = re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")   # GitHub
            found.add(github)
    return found


def broken_links(path: Path) -> list[str]:
    """Each broken relative link of ``path``, with the reason."""
    problems = []
    for target in links(path):
        parsed = urllib.parse.urlsplit(target)
        file_part, anchor = urllib.parse.unquote(parsed.path), urllib.parse.unquote(parsed.fragment)
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            shown = dest.relative_to(REPO) if dest.is_relative_to(REPO) else dest
            problems.append(f"{target}: no file {shown}")
        elif anchor and dest.is_file() and dest.suffix in (".ipynb", ".md") and anchor not in anchors(dest):
            problems.append(f"{target}: {dest.name} has no heading or anchor '{anchor}'")
    return problems
