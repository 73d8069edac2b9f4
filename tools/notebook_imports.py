"""Rewrite the notebooks so that they reach the library one way: ``import lessons_lib as ll``.

``from lessons_lib import data, plots`` then ``plots.plot_weights(...)`` becomes ``ll.plot_weights(...)``;
``from lessons_lib.mask_explorers import CausalMaskExplorer`` then ``CausalMaskExplorer(...)`` becomes
``ll.CausalMaskExplorer(...)``. Only the source of code cells changes, never an output, and the file is
written back byte for byte as nbformat writes it, so a notebook already in the one-way form is left as it
is (the tool can be re-run at any time, e.g. after merging a branch that still uses the old imports).

Usage: python tools/notebook_imports.py [--check] [notebooks/*.ipynb]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT = re.compile(r"^(?P<indent>\s*)from lessons_lib(?P<module>\.[\w.]+)? "
                    r"import (?P<names>[\w ,]+?)\s*(#.*)?$")


def rewrite_source(source: str, imported: dict[str, str]) -> str:
    """One cell's source, its library imports removed and every name reached as ``ll.X``."""
    lines = []
    for line in source.split("\n"):
        match = IMPORT.match(line)
        if not match:
            lines.append(line)
            continue
        for item in match["names"].split(","):
            name, _, alias = item.strip().partition(" as ")
            imported[(alias or name).strip()] = "module" if not match["module"] else "name"
        if not any(re.match(r"\s*import lessons_lib as ll\s*$", kept) for kept in lines):
            lines.append(f"{match['indent']}import lessons_lib as ll")
    text = "\n".join(lines)
    for local, kind in imported.items():
        if kind == "module":  # data.SENTENCES -> ll.SENTENCES
            text = re.sub(rf"(?<![\w.]){re.escape(local)}\.(\w+)", r"ll.\1", text)
        else:  # CausalMaskExplorer( -> ll.CausalMaskExplorer(
            text = re.sub(rf"(?<![\w.]){re.escape(local)}\b", f"ll.{local}", text)
    return text


def rewrite(path: Path) -> bool:
    """Rewrite one notebook in place; True if it changed."""
    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    imported: dict[str, str] = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        new = rewrite_source(source, imported)
        if new != source:
            cell["source"] = new.splitlines(keepends=True)
    text = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if text == raw:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook would change")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    changed = []
    for path in paths:
        before = path.read_bytes()
        if rewrite(path):
            changed.append(path)
            if args.check:
                path.write_bytes(before)
    for path in changed:
        print(f"{'would rewrite' if args.check else 'rewrote'} {path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
