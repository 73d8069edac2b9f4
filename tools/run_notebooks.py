"""Re-run notebooks in place from a clean kernel, so that re-running changes nothing (``make notebooks``).

Each notebook runs top to bottom in a fresh ``python3`` kernel of this interpreter, with the notebook's
folder as working directory, exactly as "Restart Kernel and Run All Cells" would. Then the outputs are
made reproducible:

* no execution timestamps (``record_timing=False``);
* no saved widget state in the notebook metadata (it holds every heatmap's PNG bytes again and changes
  on each run); the widgets come alive when the learner runs the cells;
* widget model ids (random on every run) are replaced by ids derived from the notebook name and the
  order of appearance;
* consecutive stream outputs of one stream (stdout or stderr) are merged into one output: the kernel
  flushes ``print`` output when it likes, so one cell's text can arrive in one chunk or in several.

Together these make a re-run byte-identical when nothing changed (``make notebooks`` twice: ``git diff``
shows nothing).

Each run records the digest of the code it ran in the notebook's metadata (``conventions.code_digest``,
under ``conventions.RAN_KEY``). ``--stale`` runs only the notebooks whose code changed since their last run
(or that carry no record): what a release needs, since bumping the version changes only the stamped
launch links, never an output. ``--stamp`` runs the stamping steps of :data:`STAMP_STEPS`, which write
no output and need no kernel, before the notebooks run and again after (a slide is cut by what its cells
show). ``make notebooks`` is ``--stamp`` over every notebook; ``make
release`` stamps, then runs what ``--list-stale`` names (``tools/learner_release.py``). The library is
not part of the digest: a change in ``lessons_lib`` that changes an output is what ``make
test-notebooks`` (nbval) catches.

Usage: python tools/run_notebooks.py [--stamp] [--stale | --list-stale] notebooks/*.ipynb
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import uuid
from pathlib import Path

import nbformat
from conventions import RAN_KEY, ROOT, code_digest
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: What stamps the notebooks before they run, in order (tools/, each with its arguments): cut heading cells
#: too tall for a slide, then the launch links, slide and nbgrader metadata and course maps, then the times.
STAMP_STEPS = (("split_tall_cells.py",), ("stamp_notebooks.py",), ("teaching_times.py", "--stamp"))


def stable_widget_ids(nb: nbformat.NotebookNode, name: str) -> int:
    """Replace random widget model ids by stable ones; return how many distinct ids were replaced."""
    mapping: dict[str, str] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if not view or "model_id" not in view:
                continue
            old = view["model_id"]
            if old not in mapping:
                mapping[old] = uuid.uuid5(uuid.NAMESPACE_URL, f"lessons/{name}#{len(mapping)}").hex
            view["model_id"] = mapping[old]
    return len(mapping)


def merge_streams(nb: nbformat.NotebookNode) -> int:
    """Merge runs of stream outputs of the same name (stdout, stderr) into one; return how many merged."""
    merged = 0
    for cell in nb.cells:
        outputs = []
        for output in cell.get("outputs", []):
            last = outputs[-1] if outputs else None
            if (output.get("output_type") == "stream" and last is not None
                    and last.get("output_type") == "stream" and last.get("name") == output.get("name")):
                last["text"] = "".join(last["text"]) + "".join(output["text"])
                merged += 1
            else:
                outputs.append(output)
        if "outputs" in cell:
            cell["outputs"] = outputs
    return merged


def run(path: Path, timeout: int) -> float:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=timeout,
        record_timing=False,
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    nb.metadata.pop("widgets", None)
    nb.metadata[RAN_KEY] = code_digest(nb)
    stable_widget_ids(nb, path.name)
    merge_streams(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return elapsed


def is_stale(path: Path) -> bool:
    """Has the notebook's code changed since it last ran (or did it never run with this tool)?"""
    nb = nbformat.read(path, as_version=4)
    return nb.metadata.get(RAN_KEY) != code_digest(nb)


def stamp(root: Path = ROOT) -> None:
    """Run :data:`STAMP_STEPS` (this Python, the tools of ``root``), stopping at the first that fails."""
    for tool, *args in STAMP_STEPS:
        command = [sys.executable, str(root / "tools" / tool), *args]
        print("$ " + " ".join(command[1:]), flush=True)
        subprocess.run(command, cwd=root, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell (default 600)")
    parser.add_argument("--stamp", action="store_true", help="stamp the notebooks first (no kernel needed)")
    parser.add_argument("--stale", action="store_true",
                        help="run only the notebooks whose code changed since their last run")
    parser.add_argument("--list-stale", action="store_true",
                        help="run nothing: print the notebooks whose code changed since their last run")
    args = parser.parse_args(argv)
    if args.stamp:
        stamp()
    paths = [p for p in args.notebooks if p.suffix == ".ipynb" and p.exists()]
    if args.list_stale:
        print("\n".join(str(p) for p in paths if is_stale(p)))
        return 0
    if args.stale:
        fresh = [p for p in paths if not is_stale(p)]
        paths = [p for p in paths if p not in fresh]
        if fresh:
            print("unchanged since their last run, not re-run: "
                  + ", ".join(p.stem[:2] for p in sorted(fresh)))
    if not paths:
        print("no notebooks to run")
        return 0
    failed = []
    for path in sorted(paths):
        print(f"running {path} ...", flush=True)
        try:
            print(f"  done in {run(path, args.timeout):.1f} s", flush=True)
        except Exception as exc:  # report every notebook, then fail
            print(f"  FAILED: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            failed.append(path)
    if failed:
        print("failed: " + ", ".join(map(str, failed)), file=sys.stderr)
        return 1
    if args.stamp:  # once more: where a slide is cut depends on what the cells now show
        stamp()
    return 0


if __name__ == "__main__":
    sys.exit(main())
