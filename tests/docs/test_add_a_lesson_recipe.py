"""CONTRIBUTING.md's "Adding a lesson" recipe works as written: a throwaway lesson 99, added step by step to a
copy of the tree, passes the tools and the edit loop's tests without touching anything the recipe does not
name.

The copy gets, as the recipe says: the lesson's entry in the registry (lessons_lib/course/lessons.py), a
still, an explorer (and its row in explorers/base.py's table), an exercise (and its row in the table of
exercises/__init__.py, a learner's version of its mistake in tests/helpers/wrong_answers.py, its points in
docs/classroom.md), a quiz that asks lesson 08's question too, the notebook, and its entry in the
teacher's guide; then the recipe's commands run there (export table, stamps, the timed run that measures
its minutes, the term plan, the notebook re-run from a clean kernel). The proof is the edit loop
(``pytest --edit-loop tests``, without tests/core and tests/lab, which hold code the recipe does not
touch) and nbval over the new notebook, run in the copy against the copy's library.
Everything happens in a temporary folder; the tree is not touched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.lessons import LESSONS
from tests.helpers import REPO

SLUG = "99_throwaway"

ENTRY = '''\
    Lesson(
        slug="99_throwaway",
        title="A throwaway lesson",
        short="Throwaway",
        summary="proves that the recipe for a new lesson works",
        minutes=5,
        points={"my_double": 1},
        cuts=(("Quiz", "set it as homework"),),
    ),
'''

FILES = {
    "lessons_lib/figures/lesson99_throwaway.py": '''\
        """Stills of lesson 99 (a throwaway lesson made by tests/docs/test_add_a_lesson_recipe.py)."""

        from __future__ import annotations

        import numpy as np

        from .base import heatmap

        __all__ = ["plot_doubled"]


        def plot_doubled(x, tokens):
            """Heatmap of 2·x, ``x (seq_len, seq_len)``."""
            return heatmap(2 * np.asarray(x, dtype=float), tokens, tokens, title="Every entry doubled",
                           colorbar_label="2·x")
        ''',
    "lessons_lib/explorers/lesson99_throwaway.py": '''\
        """The explorer of lesson 99 (a throwaway lesson made by tests/docs/test_add_a_lesson_recipe.py)."""

        from __future__ import annotations

        import ipywidgets as widgets
        import numpy as np

        from ..figures.live import Heatmap
        from .base import ExplorerBase

        __all__ = ["DoublingExplorer"]
        TOKENS = ["a", "b", "c"]


        class DoublingExplorer(ExplorerBase):
            """The identity matrix times a factor the slider sets."""

            title = "Doubling"
            hint = "move 'factor'"

            def __init__(self, factor: int = 2):
                super().__init__()
                self._control("factor", widgets.IntSlider(value=factor, min=1, max=4, description="factor"))
                self._figure("grid", Heatmap(title="factor × I", colorbar_label="value"))
                self.widget = self._layout([["grid"]])
                self.update()

            def _redraw(self) -> None:
                factor = self.controls["factor"].value
                self.figures["grid"].draw(factor * np.eye(3), TOKENS, TOKENS, vmin=0.0, vmax=4.0,
                                          alt=f"{self.settings()}: the identity times {factor}")

            def still(self):
                from ..figures.lesson99_throwaway import plot_doubled

                return plot_doubled(np.eye(3), TOKENS)
        ''',
    "lessons_lib/exercises/lesson99_throwaway.py": '''\
        """Exercise of notebook 99_throwaway: the learner writes ``my_double(x) = 2·x``."""

        from __future__ import annotations

        import numpy as np

        from .engine import Case, Exercise, Mistake, like

        __all__ = ["check_double"]


        def _cases() -> list[Case]:
            return [Case("a 2×3 matrix", {"x": np.arange(6.0).reshape(2, 3) + 3.0}),
                    Case("a 3×5 matrix", {"x": np.linspace(-2.0, 5.0, 15).reshape(3, 5)})]


        def _hidden(rng: np.random.Generator) -> list[Case]:
            rows, cols = (int(n) for n in rng.integers(2, 7, size=2))
            return [Case(f"a {rows}×{cols} matrix", {"x": rng.standard_normal((rows, cols))})]


        DOUBLE = Exercise(
            name="my_double", params=("x",), task="doubles every entry of x",
            reference=lambda x: 2 * np.asarray(x, dtype=float), cases=_cases, hidden=_hidden,
            start_hint="Start from one entry: 3 must become 6.",
            mistakes=(Mistake("squared", "x is squared instead of doubled",
                              "Each entry came out as itself squared.",
                              ("Each entry should be twice what it was.",
                               "Negative entries stay negative: -1 becomes -2, not 1.",
                               "Try x = np.array([[3.0]]): the answer is [[6]]."),
                              like(lambda x: x * x)),),
        )


        def check_double(fn):
            """Check the learner's ``my_double(x)`` = 2·x. Notebook 99_throwaway. Never raises."""
            return DOUBLE.check(fn)
        ''',
    "lessons_lib/quizzes/lesson99_throwaway.py": '''\
        """The quiz of lesson 99: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

        from __future__ import annotations

        from .lesson08_cost_and_flashattention import SCORE_GROWTH
        from .model import R, W, ask

        QUESTIONS = (
            SCORE_GROWTH,
            ask("What does my_double(x) return?",
                ("2·x: every entry doubled.", R, "Yes: each entry times 2."),
                ("x·x: every entry squared.", W, "That multiplies each entry by itself."),
                source="tests/docs/test_add_a_lesson_recipe.py"),
        )
        ''',
}

CELLS = [
    ("markdown", "# 99 · A throwaway lesson\n\n⏱ **about 5 minutes**\n\n"
                 "Made by tests/docs/test_add_a_lesson_recipe.py.\n\n"
                 "**By the end of this lesson you can**\n\n- add a lesson by the recipe."),
    ("code", "import numpy as np\n\nimport lessons_lib as ll"),
    ("markdown", "## The explorer\n\n**Predict:** what does the doubled matrix look like? Then move it.",
     {"lessons": {"predict": {"answer_phrases": ["every cell twice as large"]}}}),
    ("code", "ll.DoublingExplorer()"),
    ("markdown", "<details><summary>Check your answer</summary>\n\nEvery cell twice as large.\n\n</details>"),
    ("markdown", "## Why every cell doubles\n\nThe figure draws 2·x: each number is multiplied by two."),
    ("markdown", "## Exercise: double it\n\n*Easy, about 2 minutes.* Write `my_double(x)`: it returns 2·x."
                 "\n\n<details><summary>Hint</summary>\n\nEach entry should be twice what it was."
                 "\n\n</details>"),
    ("code", "def my_double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION"),
    ("code", "ll.check_double(my_double)"),
    ("markdown", "## Quiz"),
    ("code", 'll.show("99")'),
    ("markdown", "## Takeaways\n\nA lesson is a registry entry, a notebook and one file per kind.\n\n"
                 "Back to the start: [00 · Start here](00_start_here.ipynb)."),
]


def _copy_of_the_tree(dest: Path) -> Path:
    """The files git sees (tracked, or new and not ignored), as they are in the working tree."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def _add_row(path: Path, first: str, row: str) -> None:
    """Add ``row`` at the end of the docstring table whose rows match ``first`` (a regular expression)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    last = max(i for i, line in enumerate(lines) if re.match(first, line))
    end = next(i for i in range(last, len(lines)) if lines[i].startswith("==="))
    path.write_text("\n".join([*lines[:end], row, *lines[end:]]), encoding="utf-8")


def _run(copy: Path, *args: str, timeout: float = 900) -> str:
    env = {**os.environ, "PYTHONPATH": str(copy), "LESSONS_OFFLINE": "1", "HYPOTHESIS_PROFILE": "dev",
           "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, (f"{' '.join(args)} failed in the copy:\n{done.stdout[-6000:]}\n"
                                  f"{done.stderr[-3000:]}")
    return done.stdout


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.kernel
def test_a_lesson_added_by_the_recipe_passes_the_tools_and_the_edit_loop(tmp_path):
    copy = _copy_of_the_tree(tmp_path / "course")
    lib = copy / "lessons_lib"
    # 1. the registry
    registry = lib / "course" / "lessons.py"
    text = registry.read_text(encoding="utf-8")
    assert text.endswith("    ),\n)\n")
    registry.write_text(text[: -len(")\n")] + ENTRY + ")\n", encoding="utf-8")
    # 3.-6. one file per kind, and the two tables that list explorers and checks
    for name, source in FILES.items():
        (copy / name).write_text(textwrap.dedent(source), encoding="utf-8")
    _add_row(lib / "explorers" / "base.py", r":class:`\w+`\s+\d\d ",
             ":class:`DoublingExplorer`      99        the identity times a factor: factor")
    _add_row(lib / "exercises" / "__init__.py", r"``check_\w+``\s",
             "``check_double``            ``my_double(x) -> 2·x``                         99_throwaway")
    # 5. the exercise's mistake as a learner writes it, and its points in the classroom guide
    with open(copy / "tests" / "helpers" / "wrong_answers.py", "a", encoding="utf-8") as helper:
        helper.write('\nMISTAKES.append(("my_double", lambda x: x * x, "squared", ["instead of doubled"]))\n')
    classroom = copy / "docs" / "classroom.md"
    text = classroom.read_text(encoding="utf-8")
    course = re.search(r"\| \*\*course\*\* \| (\d+) exercises \| \*\*(\d+)\*\* \|", text)
    row = (f"| 99 | `my_double` (1) | 1 |\n"
           f"| **course** | {int(course[1]) + 1} exercises | **{int(course[2]) + 1}** |")
    classroom.write_text(text.replace(course[0], row), encoding="utf-8")
    # 7. the notebook
    nb = nbformat.v4.new_notebook()
    nb.cells = [(nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(
        s, metadata=metadata[0] if metadata else {}) for kind, s, *metadata in CELLS]
    nb.metadata = nbformat.read(REPO / "notebooks" / "10_review_and_paper.ipynb", as_version=4).metadata
    nbformat.write(nb, copy / "notebooks" / f"{SLUG}.ipynb")
    last_path = copy / list(LESSONS.values())[-1].notebook                  # the last lesson links onward
    last = nbformat.read(last_path, as_version=4)
    last.cells.append(nbformat.v4.new_markdown_cell("Next: [99 · A throwaway lesson](99_throwaway.ipynb)."))
    nbformat.write(last, last_path)
    # 8. the teacher's guide
    guide = copy / "docs" / "teaching.md"
    entry = ("\n## 99 · [Throwaway](../notebooks/99_throwaway.ipynb)\n\nA throwaway lesson.\n\n"
             "<!-- times:99:begin -->\n<!-- times:99:end -->\n\n"
             "<!-- mistakes:99:begin -->\n<!-- mistakes:99:end -->\n")
    text = guide.read_text(encoding="utf-8")
    number = 1 + max(int(n) for n in re.findall(r"^\| O(\d+) \|", text, re.M))     # the next outcome's
    outcome = f"| O{number} | double an array | 99 | `my_double` | |\n<!-- outcomes:end -->"
    text = text.replace("<!-- outcomes:end -->", outcome, 1)
    guide.write_text(text + entry, encoding="utf-8")
    # the recipe's commands, in the copy, against the copy's library
    _run(copy, "tools/export_table.py", "--write")
    _run(copy, "tools/stamp_notebooks.py")
    _run(copy, "tools/teaching_times.py", "--write", f"notebooks/{SLUG}.ipynb")
    _run(copy, "tools/term_plan.py", "--write")
    # 9. make notebooks (run_notebooks.py --stamp), for the new lesson (the others' outputs do not change):
    # the stamps, the run, the stamps again (where a slide is cut depends on what the cells now show)
    _run(copy, "tools/run_notebooks.py", "--stamp", f"notebooks/{SLUG}.ipynb")

    assert 'slug="99_throwaway"' in registry.read_text(encoding="utf-8")
    lesson_00 = (copy / "notebooks" / "00_start_here.ipynb").read_text(encoding="utf-8")
    assert "| [99 · Throwaway](99_throwaway.ipynb) |" in lesson_00, "lesson 00's course map lists the lesson"
    assert "99_throwaway.ipynb" in (copy / "README.md").read_text(encoding="utf-8")
    # the edit loop as make check runs it, on every core, without the formulas' and the experiments' own
    # tests (tests/core, tests/lab: a lesson made by the recipe adds none of their code)
    _run(copy, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--edit-loop", "-n", "auto", "--maxprocesses",
         "4", "--dist", "loadfile", "tests", "--ignore=tests/core", "--ignore=tests/lab")
    _run(copy, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval", f"notebooks/{SLUG}.ipynb")
