"""Export the course to static HTML pages that work offline (``make html``, ``make html-teacher``).

By default the pages are the **learner** copy: every notebook goes through
``tools/learner_copy.py`` first (worked solutions replaced, the exercise feedback that says
PASSED cleared, nbgrader's graded cells dropped). A page cannot run a cell, so the outputs a *Predict*
prompt asks about are kept, in closed folds that the reader opens after predicting.
``--teacher`` exports the source notebooks, solutions and all, for the teacher's eyes only.

Each lesson becomes ``NN_name.html`` (JupyterLab's look, through nbconvert and the template in
``tools/html_template/course``) and a printable handout ``NN_name.handout.html`` (the lesson's
formula, its figures and its takeaways, laid out for one or two printed pages). ``index.html``
lists both. The pages need no network:

* MathJax is served from the build folder (``mathjax/``, copied from the package
  ``jupyter-server-mathjax``), never from a CDN;
* live widgets cannot run without a kernel, so their outputs show what the notebook stored for
  that case: the explorers' still picture and sentence, a quiz as text, and a progress bar in its
  final state (the run that made the outputs finished it), not the "0%" its text was captured at;
* every figure is the ``<img>`` that ``lessons_lib`` stores, with its alt text (its title and caption,
  LaTeX read as symbols: ``q_i · k_j``; ``lessons_lib.figures.base.still_output``);
* the pages meet WCAG 2.1 AA (the template: code colours of at least 4.5:1, links underlined in running
  text); formulas carry MathJax's assistive MathML for screen readers, and its speech explorer (the
  formula's context menu, Accessibility) finds its rules in ``mathjax/``, beside the pages;
* the page title is the lesson's title; its one H1 is the lesson's first heading, and its contents list
  (stamped by ``tools/stamp_notebooks.py``) links each H2: the headings keep the ids JupyterLab gives them;
* JupyterLab's theme is one stylesheet beside the pages (``jupyterlab-theme.css``), linked rather than
  inlined in each; every page is valid HTML for the Nu HTML Checker
  (``tests/tools/test_pages_are_valid_html.py``).

``tests/tools/test_static_pages.py`` checks the pages' content; ``tests/browser/test_offline_pages.py``
opens them in Chromium with the network cut off, finds every formula typeset and every image loaded, and
runs axe-core.

Usage: python tools/export_html.py [--teacher] [--out build/html] [notebooks/*.ipynb]
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
import urllib.parse
from pathlib import Path

import jupyter_server_mathjax
import nbformat
from nbconvert import HTMLExporter
from nbconvert.filters import markdown2html

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conventions import SUBSLIDE_TAG
from learner_copy import learner_notebook
from stamp_notebooks import lesson_title

from lessons_lib.figures.base import read_still, still_numbers

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "tools" / "html_template"
MATHJAX = Path(jupyter_server_mathjax.__file__).parent / "static"
MATHJAX_URL = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# The packaged MathJax holds the STIX-Web fonts only (as Jupyter's classic notebook configured it)
MATHJAX_FONTS = ('<script type="text/x-mathjax-config">MathJax.Hub.Config({"HTML-CSS": {availableFonts: [], '
                 'preferredFont: null, webFont: "STIX-Web", imageFont: null}});</script>')
# JupyterLab's light theme, which nbconvert's lab template inlines in every page: linked from one file instead
LAB_THEME = ("static/index.css", "static/theme-light.css")
LAB_CSS = "jupyterlab-theme.css"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# tqdm's text as captured when the bar appeared: "training:   0%|          | 0/301 [00:00<?, ?step/s]"
_TQDM = re.compile(r"^(?P<desc>[^\n]*?):?\s+\d+%\|[^|]*\|\s*\d+/(?P<total>\d+)\b[^\n]*$")

# ------------------------------------------------------------------------------------ notebooks
def static_notebook(nb: nbformat.NotebookNode, teacher: bool = False) -> nbformat.NotebookNode:
    """The notebook as a page without a kernel shows it (the learner copy unless ``teacher``; its outputs
    to predict kept in closed folds, since a page's reader cannot run the cells)."""
    nb = nbformat.from_dict(nb) if teacher else learner_notebook(nb, page=True)[0]
    nb.metadata["title"] = lesson_title(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            del data[WIDGET_VIEW]  # no kernel, no widget state: show the stored still and text
            text = data.get("text/plain", "")
            bar = _TQDM.match(text.strip())
            if bar:
                desc, total = bar["desc"], bar["total"]
                data["text/plain"] = f"{desc}: 100%|██████████| {total}/{total} (finished)"
    return nb


# ------------------------------------------------------------------------------------ handout
def stills(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """Every still picture of the notebook's outputs, in order: ``(PNG as base64, alt text)``."""
    return [still for cell in nb.cells for output in cell.get("outputs", [])
            if (still := read_still(output.get("data", {})))]


def section(nb: nbformat.NotebookNode, heading: str) -> str:
    """The markdown cell whose first line matches ``heading``, with the cells split off it to fit a
    slide (tagged ``own-subslide`` by tools/split_tall_cells.py) joined back; "" if there is none."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.match(heading, cell.source.lstrip()):
            parts = [cell.source]
            for follower in nb.cells[index + 1:]:
                if follower.cell_type != "markdown" or SUBSLIDE_TAG not in follower.metadata.get("tags", []):
                    break
                parts.append(follower.source)
            return "\n\n".join(parts)
    return ""


def handout(nb: nbformat.NotebookNode, title: str) -> str:
    """A print-ready page: the lesson's formula, its figures (two a row) and its takeaways."""
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    formula = re.search(r"\$\$(.+?)\$\$", markdown, re.S)
    takeaways = re.sub(r"^##\s+.*\n", "", section(nb, r"##\s+.*Takeaways").lstrip(), count=1)
    figures = []
    for data in (o.get("data", {}) for cell in nb.cells for o in cell.get("outputs", [])):
        if still := read_still(data):  # the picture, its caption and its numbers (a collapsed table)
            png, alt = still
            figures.append(f'<div class="still"><figure><img src="data:image/png;base64,{png}" '
                           f'alt="{html.escape(alt)}"><figcaption>{html.escape(alt.split(";")[0])}'
                           f'</figcaption></figure>{still_numbers(data)}</div>')
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)} (handout)</title>"
        "<script type='text/x-mathjax-config'>MathJax.Hub.Config({tex2jax: {inlineMath: [['$','$']], "
        "displayMath: [['$$','$$']], processEscapes: true}});</script>"
        f"{MATHJAX_FONTS}<script src='{MATHJAX_URL}'></script>"
        "<style>body{font-family:sans-serif;max-width:19cm;margin:1cm auto;padding:0 8px;font-size:11pt;"
        "line-height:1.4;overflow-wrap:break-word}"
        "h1{font-size:16pt}.formula{font-size:13pt;margin:0.5em 0 1em;overflow-x:auto;position:relative}"
        ".MathJax_Display{overflow-x:auto;overflow-y:hidden;position:relative}"   # a wide formula scrolls
        # an inline formula wider than a narrow window (400 % zoom) scrolls in its own box, not the page
        "@media (max-width:480px){.MathJax{display:inline-block!important;max-width:100%!important;"
        "overflow-x:auto;overflow-y:hidden;vertical-align:middle}}"
        # two figures a row on paper; one a row in a narrow window (400 % zoom), never wider than it
        ".figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,8cm),1fr));gap:0.4cm}"
        ".still{break-inside:avoid;min-width:0}figure{margin:0;break-inside:avoid}"
        "figure img{width:100%;height:auto}"
        "figcaption{font-size:8pt;color:#333}.lessons-still-numbers{font-size:8pt;overflow-x:auto}"
        ".lessons-still-table{border-collapse:collapse;margin-bottom:4pt}.lessons-still-table th,"
        ".lessons-still-table td{border:1px solid #767676;padding:0 3pt}"
        "@page{size:A4;margin:1cm}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        + (f"<div class='formula'>$${formula.group(1).strip()}$$</div>" if formula else "")
        + f"<div class='figures'>{''.join(figures)}</div>"
        + f"<h2>Takeaways</h2>{markdown2html(takeaways)}</body></html>\n"
    )


# ------------------------------------------------------------------------------------ export
def exporter() -> HTMLExporter:
    exp = HTMLExporter(template_name="course", extra_template_basedirs=[str(TEMPLATES)])
    exp.exclude_input_prompt = True
    exp.exclude_output_prompt = True
    exp.mathjax_url = MATHJAX_URL
    return exp


def lab_stylesheet(exp: HTMLExporter) -> tuple[list[str], str]:
    """JupyterLab's theme as nbconvert inlines it in every page (its ``<style>`` blocks, as they stand in the
    page) and as one stylesheet, :data:`LAB_CSS`, that the pages link to instead."""
    env = exp.environment
    sources = [env.loader.get_source(env, name)[0] for name in LAB_THEME]
    return [f'<style type="text/css">\n{css}</style>' for css in sources], "\n".join(sources)


def linked_lab_theme(body: str, inlined: list[str]) -> str:
    """The page with JupyterLab's theme linked (:data:`LAB_CSS`) instead of inlined: one copy for all the
    pages, and what the Nu HTML Checker validates of the page is the course's own markup and CSS (its CSS
    checker predates the theme's: logical properties, ``revert``, ``calc()`` over variables)."""
    missing = [css[:60] for css in inlined if css not in body]
    if missing:
        raise ValueError(f"nbconvert no longer inlines JupyterLab's theme as expected: {missing}")
    body = body.replace(inlined[0], f'<link rel="stylesheet" href="{LAB_CSS}">', 1)
    for css in inlined[1:]:
        body = body.replace(css, "", 1)
    return body.replace('<style type="text/css">', "<style>")  # HTML's default type, said once


def lesson_pages(exp: HTMLExporter, path: Path, teacher: bool = False,
                 inlined: list[str] | None = None) -> tuple[str, str, str]:
    """The notebook at ``path`` as its page and its handout: ``(title, page, handout)`` (JupyterLab's theme
    linked instead of ``inlined``, when given)."""
    nb = static_notebook(nbformat.read(path, as_version=4), teacher)
    title = nb.metadata["title"]
    body, _ = exp.from_notebook_node(nb, resources={"metadata": {"name": path.stem},
                                                               "mathjax_fonts": MATHJAX_FONTS})
    body = re.sub(r'href="(\d\d_[\w-]+)\.ipynb', r'href="\1.html', body)  # lesson links stay inside
    body = readable_heading_ids(body)
    return title, linked_lab_theme(body, inlined) if inlined else body, handout(nb, title)


def readable_heading_ids(body: str) -> str:
    """The page with each heading's id as JupyterLab gives it (the heading's text, spaces as ``-``), not
    percent-encoded as nbconvert writes it: a link ``#...`` reaches its heading in a browser whichever of the
    two forms it is written in (the HTML standard tries the fragment as written, then decoded), where
    nbconvert's own ids and the links it writes disagree on ``'`` (``PyTorch's`` against ``PyTorch%27s``)."""
    def readable(match: re.Match) -> str:
        decoded = urllib.parse.unquote(html.unescape(match.group(2)))
        return f'{match.group(1)}id="{html.escape(decoded, quote=True)}"'
    return re.sub(r'(<h[1-6]\b[^>]*?\s)id="([^"]*)"', readable, body)


def index_page(titles: dict[str, str], teacher: bool = False) -> str:
    """The index: each lesson (``titles``: the page's stem -> its title) and its printable handout."""
    items = [f'<li><a href="{stem}.html">{html.escape(title)}</a> '
             f'(<a href="{stem}.handout.html">printable handout</a>)</li>' for stem, title in titles.items()]
    kind = "teacher's copy, with solutions" if teacher else "learner's copy"
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<title>Attention, step by step</title></head><body><h1>Attention, step by step</h1>"
            f"<p>Static pages ({kind}); run the notebooks in "
            f"JupyterLab for the live explorers.</p><ol>{''.join(items)}</ol></body></html>\n")


def export(notebooks: list[Path], out: Path, teacher: bool = False) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(MATHJAX, out / "mathjax", dirs_exist_ok=True)
    exp, pages, titles = exporter(), [], {}
    inlined, stylesheet = lab_stylesheet(exp)
    (out / LAB_CSS).write_text(stylesheet, encoding="utf-8")
    for path in sorted(notebooks):
        title, body, printable = lesson_pages(exp, path, teacher, inlined)
        page = out / f"{path.stem}.html"
        page.write_text(body, encoding="utf-8")
        (out / f"{path.stem}.handout.html").write_text(printable, encoding="utf-8")
        pages.append(page)
        titles[path.stem] = title
    (out / "index.html").write_text(index_page(titles, teacher), encoding="utf-8")
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "html")
    parser.add_argument("--teacher", action="store_true",
                        help="export the source notebooks, solutions included")
    args = parser.parse_args(argv)
    pages = export(args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb")), args.out, args.teacher)
    print(f"{len(pages)} lessons exported to {args.out}/ (open index.html; "
          f"{'teacher' if args.teacher else 'learner'} copy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
