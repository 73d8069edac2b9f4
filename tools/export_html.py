"""Export the course to static HTML pages (``make html``), for reading without a kernel.

Each lesson becomes ``build/html/NN_name.html`` with its stored outputs (figures, the explorers'
still pictures and sentences), in JupyterLab's look, through nbconvert and the template in
``tools/html_template/course``, which writes every figure's alt text (its title and caption, from
the output metadata ``lessons_lib`` attaches). Links between lessons point at the HTML pages, and
``index.html`` lists the lessons. ``tests/test_html.py`` checks every lesson's page has its images,
each with a real alt text.

Usage: python tools/export_html.py [--out build/html] [notebooks/*.ipynb]
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "tools" / "html_template"


def exporter() -> HTMLExporter:
    exp = HTMLExporter(template_name="course", extra_template_basedirs=[str(TEMPLATES)])
    exp.exclude_input_prompt = True
    exp.exclude_output_prompt = True
    return exp


def export(notebooks: list[Path], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    exp, pages = exporter(), []
    for path in sorted(notebooks):
        nb = nbformat.read(path, as_version=4)
        body, _ = exp.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        body = re.sub(r'href="(\d\d_[\w-]+)\.ipynb', r'href="\1.html', body)  # lesson links stay inside
        page = out / f"{path.stem}.html"
        page.write_text(body, encoding="utf-8")
        pages.append(page)
    items = "\n".join(f'<li><a href="{p.name}">{html.escape(p.stem)}</a></li>' for p in pages)
    (out / "index.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>Attention, step by step</title></head>"
        f"<body><h1>Attention, step by step</h1><ol>{items}</ol></body></html>\n", encoding="utf-8")
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "html")
    args = parser.parse_args(argv)
    pages = export(args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb")), args.out)
    print(f"{len(pages)} lessons exported to {args.out}/ (open index.html)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
