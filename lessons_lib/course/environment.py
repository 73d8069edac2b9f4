"""The environment check of notebook 00 (00_start_here.ipynb): is this setup ready for the course?

``environment_report()`` collects, without importing anything heavy it does not need:

* the version of Python, against the course's floor: ``requires-python`` of ``pyproject.toml``, read by
  :func:`lessons_lib.course.project.python_floor` (from the installed library's metadata where the
  repository is not there: Binder, a hub); a Python below it is not ready, and the verdict names the floor;
* the versions of numpy, matplotlib, Pillow, ipywidgets (and its JupyterLab extension
  ``jupyterlab_widgets``), ipykernel and JupyterLab, read from the installed package metadata;
* PyTorch, if installed (found with ``importlib.util.find_spec`` first, imported only then), and which
  device ``lessons_lib.core.backends`` will run torch's scaled dot-product attention on: the GPU (CUDA) or
  the CPU; without it, which lessons need it, as the registry says (:func:`~.lessons.torch_lessons`);
* a widget check: a slider the learner moves, with a line of text that echoes the value Python
  received. If it echoes, every slider of the lessons will work;
* whether the course library is older than the lessons (:func:`library_behind`): on a class hub the
  library comes with the hub's environment (its image) while the lessons come by the nbgitpuller link, so
  a release that changed both reaches the lessons at once and the library only when the hub is rebuilt.
  Each lesson carries the version it was released with (:data:`VERSION_KEY` in its metadata, written by
  ``tools/stamp_notebooks.py``); the kernel finds its notebook by ``JPY_SESSION_NAME``, which Jupyter
  Server sets for every kernel it starts for a notebook.

The report shows as a table in Jupyter (HTML) and as plain text anywhere else (``print(report)``).
"""

from __future__ import annotations

import html
import importlib.metadata
import json
import os
import platform
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .lessons import torch_lessons
from .project import python_floor

__all__ = ["EnvironmentReport", "Component", "environment_report", "widget_check"]

# (distribution name, label, needed?, what it is for)
_PACKAGES = [
    ("numpy", "numpy", True, "the attention formulas (every lesson)"),
    ("matplotlib", "matplotlib", True, "figures and heatmaps"),
    ("pillow", "Pillow", True, "the PNG images of matplotlib's figures"),
    ("ipywidgets", "ipywidgets", True, "sliders, quizzes and exercise checks"),
    ("anywidget", "anywidget", True, "the live figures the explorers draw in the browser"),
    ("jupyterlab_widgets", "jupyterlab_widgets", False, "shows ipywidgets in JupyterLab"),
    ("ipykernel", "ipykernel", False, "the Python kernel of the notebooks"),
    ("jupyterlab", "JupyterLab", False, "the notebook interface"),
]

def torch_lessons_named() -> str:
    """``the PyTorch lessons (07, 08, 09, 10)``, from the registry."""
    return f"the PyTorch lessons ({', '.join(torch_lessons())})"


def version_tuple(version: str) -> tuple[int, ...]:
    """``"3.10.14"`` -> ``(3, 10, 14)``; a part not a number ends it: ``"3.13.0rc1"`` -> ``(3, 13)``."""
    parts = []
    for part in version.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)


#: the notebook metadata that names the course version a lesson was released with (tools/stamp_notebooks.py)
VERSION_KEY = "lessons_version"


def _torch_install() -> str:
    """The command that installs the CPU-only torch build (one source: lessons_lib.core.backends)."""
    from ..core.backends import TORCH_CPU_INSTALL

    return TORCH_CPU_INSTALL


@dataclass(frozen=True)
class Component:
    """One line of the report."""

    name: str
    version: str | None      # None: not installed
    needed: bool             # needed by every lesson (True) or optional (False)
    purpose: str
    note: str = ""

    @property
    def installed(self) -> bool:
        return self.version is not None

    @property
    def status(self) -> str:
        if self.installed:
            return "OK"
        return "MISSING (needed)" if self.needed else "not installed (optional)"


@dataclass(frozen=True)
class EnvironmentReport:
    """What :func:`environment_report` found. Displays as a table in Jupyter, as text elsewhere."""

    python: str
    platform: str
    components: tuple[Component, ...]
    python_floor: tuple[int, int] | None = None   # the course's lowest Python; None: could not be read
    torch_version: str | None = None
    device: str | None = None            # "cuda" or "cpu" when torch is installed, else None
    gpu_name: str | None = None
    torch_error: str | None = None       # torch is installed but failed to import
    notes: tuple[str, ...] = field(default_factory=tuple)   # e.g. the library older than the lessons

    # ---------------------------------------------------------------- queries
    @property
    def missing(self) -> list[str]:
        """Names of the needed packages that are not installed."""
        return [c.name for c in self.components if c.needed and not c.installed]

    @property
    def python_too_old(self) -> bool:
        """True when this Python is below the course's floor (pyproject.toml's ``requires-python``)."""
        return self.python_floor is not None and version_tuple(self.python)[:2] < self.python_floor

    @property
    def floor_text(self) -> str:
        """``3.11``, the course's lowest Python, in words."""
        return ".".join(map(str, self.python_floor)) if self.python_floor else "unknown"

    @property
    def ok(self) -> bool:
        """True when this Python is new enough and every package the lessons need is installed (torch is
        optional)."""
        return not self.missing and not self.python_too_old

    @property
    def torch_path(self) -> str:
        """One sentence: where lessons_lib.core.backends will run torch's attention, or why it cannot."""
        if self.torch_error:
            return f"PyTorch is installed but failed to import ({self.torch_error})."
        if self.torch_version is None:
            return (
                f"PyTorch is not installed: the numpy lessons work without it; {torch_lessons_named()} "
                f"need it. "
                f"Install the CPU-only build with `{_torch_install()}` and restart the kernel."
            )
        if self.device == "cuda":
            gpu = f" ({self.gpu_name})" if self.gpu_name else ""
            return f"GPU path: torch attention (SDPA) will run on CUDA{gpu}."
        return "CPU path: no CUDA GPU is visible, so torch attention (SDPA) will run on the CPU."

    @property
    def verdict(self) -> str:
        if self.ok:
            return "Ready: everything the lessons need is installed."
        reasons = []
        if self.python_too_old:
            floor = self.floor_text
            reasons.append(
                f"this is Python {self.python}, and the course needs Python {floor} or newer. Install Python "
                f"{floor} or newer, run `make lab PYTHON=python{floor}` in the course folder and choose the "
                f"course's kernel (.venv)")
        if self.missing:
            reasons.append("missing " + ", ".join(self.missing) + ". Run `make lab` in the course folder (it "
                           "installs requirements.txt), then restart the kernel")
        return "Not ready: " + "; ".join(reasons) + "."

    @property
    def python_status(self) -> str:
        if self.python_floor is None:
            return "not checked"
        return "TOO OLD" if self.python_too_old else "OK"

    def as_dict(self) -> dict:
        """The report as plain data (for tests and logs)."""
        return {
            "python": self.python,
            "python_floor": self.floor_text,
            "platform": self.platform,
            "packages": {c.name: c.version for c in self.components},
            "torch": self.torch_version,
            "device": self.device,
            "gpu": self.gpu_name,
            "ok": self.ok,
        }

    # --------------------------------------------------------------- display
    def _rows(self) -> list[tuple[str, str, str, str]]:
        need = f"the course needs {self.floor_text} or newer" if self.python_floor else (
            "the course's Python floor could not be read (lessons-lib is not installed)")
        rows = [("Python", self.python, self.python_status, f"{self.platform}; {need}")]
        for c in self.components:
            rows.append((c.name, c.version or "-", c.status, c.note or c.purpose))
        if self.torch_error:
            torch_status = "BROKEN"
        else:
            torch_status = "OK" if self.torch_version else "not installed (optional)"
        rows.append(("PyTorch", self.torch_version or "-", torch_status, self.torch_path))
        return rows

    def __str__(self) -> str:
        rows = self._rows()
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        w2 = max(len(r[2]) for r in rows)
        lines = ["Environment check"]
        lines += [f"  {a:<{w0}}  {b:<{w1}}  {c:<{w2}}  {d}" for a, b, c, d in rows]
        lines += [f"  {note}" for note in self.notes]
        lines.append(self.verdict)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        esc = html.escape
        body = "".join(
            "<tr>"
            f"<th scope='row' style='text-align:left'>{esc(a)}</th>"
            f"<td style='text-align:left'><code>{esc(b)}</code></td>"
            f"<td style='text-align:left'>{'&#10003; ' if c == 'OK' else '&#9888; '}{esc(c)}</td>"
            f"<td style='text-align:left'>{esc(d)}</td>"
            "</tr>"
            for a, b, c, d in self._rows()
        )
        notes = "".join(f"<p>{esc(n)}</p>" for n in self.notes)
        return (
            "<div class='lessons-environment'>"
            "<table><caption style='text-align:left'><b>Environment check</b></caption>"
            "<thead><tr>"
            + "".join(f"<th scope='col' style='text-align:left'>{h}</th>"
                      for h in ("Component", "Version", "Status", "What it is for"))
            + "</tr></thead>"
            f"<tbody>{body}</tbody></table>{notes}<p><b>{esc(self.verdict)}</b></p></div>"
        )

    def _ipython_display_(self) -> None:
        """In Jupyter: the table, then the widget check the learner can move."""
        from IPython.display import display

        display({"text/html": self._repr_html_(), "text/plain": str(self)}, raw=True)
        if installed_version("ipywidgets") is not None:
            display(widget_check())


def installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def lessons_version(notebook: str | os.PathLike | None = None) -> str | None:
    """The course version the lesson ``notebook`` was released with (its metadata's :data:`VERSION_KEY`);
    by default the notebook this kernel runs (``JPY_SESSION_NAME``). None when that cannot be told."""
    path = notebook if notebook is not None else os.environ.get("JPY_SESSION_NAME")
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("metadata", {}).get(VERSION_KEY) if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def _release(version: str) -> tuple[int, ...] | None:
    """The numbers of a version's release part (``0.3.0`` -> (0, 3, 0)); None when it has none."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    if not match or "unknown" in version:
        return None
    numbers = [int(n) for n in match.group(1).split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:  # 0.3 == 0.3.0
        numbers.pop()
    return tuple(numbers)


def library_behind(notebook: str | os.PathLike | None = None, library: str | None = None) -> str | None:
    """A warning when the course library (``lessons_lib.__version__``, or ``library``) is older than the
    lessons (:func:`lessons_version` of ``notebook``); None when it is not, or when either cannot be told.

    >>> library_behind(library="0.0.1") is None   # no notebook to compare with
    True
    """
    if library is None:
        from .. import __version__ as library
    lessons = lessons_version(notebook)
    have, want = _release(library), _release(lessons or "")
    if have is None or want is None or have >= want:
        return None
    return (f"Warning: the course library here (lessons_lib {library}) is older than these lessons "
            f"({lessons}), so an exercise's check or an explorer may not match what its lesson says. On a "
            "class hub the library comes with the hub itself: tell your teacher, who updates the hub's "
            "environment (the classroom guide's mid-term update). On your own computer: git pull, then "
            "make lab.")


def widget_check(value: int = 3):
    """A slider and a line that echoes its value from Python: if the echo follows, widgets work.

    Moving the slider sends the new value to the kernel; the kernel's callback rewrites the line
    below it. So an echo proves the whole round trip the lessons' sliders rely on. For screen readers
    the slider is named and the echo line is a status region (:class:`~lessons_lib.figures.live.Access`).
    """
    import ipywidgets as widgets

    from ..figures.live.access import Access, control_entry

    slider = widgets.IntSlider(value=value, min=0, max=10, description="Move me", continuous_update=True,
                               layout=widgets.Layout(max_width="100%"))
    # at 400 % zoom it fits the column: its read-out goes under the track in a narrow window
    # (live_figures.css)
    slider.add_class("lessons-slider-check")
    echo = widgets.HTML(
        value=f"Python has the value <b>{value}</b>. Move the slider: this line should follow it."
    )
    echo.add_class("lessons-widget-echo")

    def _on_change(change):
        echo.value = (
            f"Python received <b>{change['new']}</b> (squared: {change['new'] ** 2}). "
            "Widgets work: every slider in the lessons will respond like this one."
        )

    slider.observe(_on_change, names="value")
    help_text = widgets.HTML(
        "<b>Widget check.</b> If you see a text such as <code>VBox(children=...)</code> here instead of "
        "a slider, the JupyterLab widget extension is not active: install the course requirements "
        "(<code>make lab</code>) and reload the browser page."
    )
    access = Access(scope=".lessons-widget-check", controls=[
        control_entry("lessons-slider-check", "Move me: a test slider, echoed by the line below it",
                      value="Move me"),
        control_entry("lessons-widget-echo", status=True)])
    box = widgets.VBox([help_text, slider, echo, access])
    box.add_class("lessons-widget-check")
    return box


def environment_report() -> EnvironmentReport:
    """Check this environment for the course (lesson 00) and return a displayable report.

    Imports torch only when it is installed; everything else is read from package metadata.
    """
    from ..core import backends

    components = []
    for dist, label, needed, purpose in _PACKAGES:
        version = installed_version(dist)
        note = ""
        if dist == "jupyterlab" and version is None:
            note = "not in this kernel's environment (fine if the server runs elsewhere, e.g. a JupyterHub)"
        if dist == "jupyterlab_widgets" and version is None and installed_version("ipywidgets"):
            note = "missing: sliders may show as plain text in JupyterLab"
        components.append(Component(label, version, needed, purpose, note))

    torch_version = device = gpu = error = None
    if backends.torch_available():
        try:
            # a kernel that has not imported torch yet asks a separate Python: lesson 00 stays light
            info = backends.describe_torch(separate_process="torch" not in sys.modules)
        except Exception as exc:  # a broken install must not break the check
            error = f"{type(exc).__name__}: {exc}"
            torch_version = installed_version("torch")
        else:
            torch_version = info.get("torch")
            device = "cuda" if info.get("cuda") else "cpu"
            gpu = info.get("gpu")

    behind = library_behind()
    return EnvironmentReport(
        python=platform.python_version(),
        platform=f"{platform.system()} {platform.machine()}".strip(),
        components=tuple(components),
        python_floor=python_floor(),
        torch_version=torch_version,
        device=device,
        gpu_name=gpu,
        torch_error=error,
        notes=(behind,) if behind else (),
    )
