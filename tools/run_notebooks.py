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

Usage: python tools/run_notebooks.py notebooks/*.ipynb
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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
    stable_widget_ids(nb, path.name)
    merge_streams(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell (default 600)")
    args = parser.parse_args(argv)
    paths = [p for p in args.notebooks if p.suffix == ".ipynb" and p.exists()]
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
