"""Registers lesson 14 (latent and sparse attention) in one step, once lesson 13 has landed.

Run from the repository root: ``python staging/lesson14/register.py``. It

1. moves the lesson's parts from ``staging/lesson14/`` to where the course finds them (``git mv``): the
   stills, the explorer, the exercises, the quiz, the notebook, and the lesson's tests;
2. adds the registry entry to ``lessons_lib/course/lessons.py`` (and Part III to ``PARTS`` if lesson 13
   did not), the rows of the tables in ``lessons_lib/exercises/__init__.py`` and
   ``lessons_lib/explorers/base.py``, the learner-written mistakes to ``tests/helpers/wrong_answers.py``, the
   points to ``docs/classroom.md``, and the teacher's-guide entry and outcome row to ``docs/teaching.md``;
3. removes ``staging/``.

Then (by hand, see ``staging/lesson14/README.md``): lesson 13's last cell links on to 14, ``python
tools/teaching_times.py --write notebooks/14_latent_and_sparse.ipynb``, ``python tools/term_plan.py --write``,
``make notebooks``, ``make check``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "staging" / "lesson14"
NAME = "lesson14_latent_and_sparse"

ENTRY = """    Lesson(
        slug="14_latent_and_sparse",
        title="Latent and sparse attention: DeepSeek's MLA and DSA",
        short="Latent and sparse attention",
        summary="DeepSeek's multi-head latent attention: a latent cached per token, the up-projections "
                "folded, the decoupled rope key; DeepSeek-V3.2's sparse attention: a lightning indexer and "
                "each query's top-k keys; both read against transformers",
        minutes=75,
        torch=True,
        points={"my_absorbed_scores": 4, "my_topk_keys": 2},
        cuts=(("Read the real thing", "show the printed agreement only"), ("Quiz", "set it as homework"),
              ("What it gives up", "read at home")),
    ),"""


def _rows(widths, rows) -> str:
    """Lines of an RST simple table whose columns are ``widths`` wide."""
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


EXERCISE_ROWS = _rows((26, 46, 27), [
    ("``check_absorbed_scores``", "``my_absorbed_scores(q_nope, q_rope, latent,``", "14_latent_and_sparse"),
    ("", "``k_rope, w_uk, positions)``: one MLA head's", ""),
    ("", "scores, W_UK folded into the query", ""),
    ("``check_topk_keys``", "``my_topk_keys(scores, top_k)``: the keys each", "14_latent_and_sparse"),
    ("", "query keeps in sparse attention", "")])

EXPLORER_ROW = "\n" + _rows((30, 8, 60), [
    (":class:`LatentSparseExplorer`", "14", "a tiny MLA layer: the cache per token, the keys the"),
    ("", "", "indexer keeps over the dense weights, each output's"),
    ("", "", "distance from dense attention: d_c, top_k, query")])

#: learner-written wrong answers and the words their feedback must say (tests/helpers/wrong_answers.py)
MISTAKE_HELPERS = """

def _absorbed(turn_nope=False, w_uk_as_is=False, rotated=True, turned=True, width="head"):   # lesson 14
    def my_absorbed_scores(q_nope, q_rope, latent, k_rope, w_uk, positions):
        query = ll.rope(q_nope, positions) if turn_nope else q_nope
        nope = (query @ (w_uk if w_uk_as_is else w_uk.T)) @ latent.T
        if turned:
            q_rope, k_rope = ll.rope(q_rope, positions), ll.rope(k_rope, positions)
        rope = q_rope @ k_rope.T if rotated else 0.0
        d = {"head": q_nope.shape[-1] + q_rope.shape[-1], "latent": latent.shape[-1],
             "nope": q_nope.shape[-1]}[width]
        return (nope + rope) / np.sqrt(d)
    return my_absorbed_scores


def _topk_rows(first=0, last=1, sign=-1.0, fill=False, every=False):   # lesson 14: which keys row i ranks
    def my_topk_keys(scores, top_k):
        n_queries, n_keys = scores.shape
        keep = np.zeros(scores.shape, dtype=bool)
        for i in range(n_queries):
            seen = n_keys if every else max(i + last + (n_keys - n_queries if first is None else first), 0)
            ranked = np.argsort(sign * scores[i, :seen])[:top_k]
            if fill and len(ranked) < top_k:          # later keys make up the number
                ranked = np.argsort(sign * scores[i])[:top_k]
            keep[i, ranked] = True
        return keep
    return my_topk_keys
"""
MISTAKES = """    # lesson 14
    ("my_absorbed_scores", _absorbed(turn_nope=True), "rope_absorbed", ["cannot be folded"]),
    ("my_absorbed_scores", _absorbed(w_uk_as_is=True), "w_uk_wrong_side", ["the other way"]),
    ("my_absorbed_scores", _absorbed(rotated=False), "rope_forgotten", ["rotated part"]),
    ("my_absorbed_scores", _absorbed(width="latent"), "scale_of_latent", ["the head's"]),
    ("my_absorbed_scores", _absorbed(width="nope"), "scale_of_nope", ["its rope part"]),
    ("my_absorbed_scores", _absorbed(turned=False), "rope_not_turned", ["untouched"]),
    ("my_topk_keys", _topk_rows(first=None, every=True), "future_keys", ["causal"]),
    ("my_topk_keys", _topk_rows(first=0), "top_left", ["the last tokens"]),
    ("my_topk_keys", _topk_rows(first=None, sign=1.0), "lowest_kept", ["best-ranked"]),
    ("my_topk_keys", _topk_rows(first=None, last=0), "itself_excluded", ["its own key"]),
    ("my_topk_keys", _topk_rows(first=None, fill=True), "short_rows_filled", ["no more"]),
"""
LAST_MISTAKE = '    ("my_repeat_kv", _refusing(_broadcast_heads_in_turn), "tiled", ["in turn"]),\n'
MISTAKES_TABLE = "\n\n#: (exercise, a learner's wrong function"

TEACHING = (HERE / "teaching.md").read_text(encoding="utf-8")
OUTCOME = ("| O12 | cache a latent instead of keys and values and size it for a published model, fold the "
           "up-projections into the query and the output, explain the decoupled rope key, and keep each "
           "query's top-k keys by an indexer, saying what that saves and gives up | 14 | "
           "`my_absorbed_scores`, `my_topk_keys` | |\n")


def git(*args):
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def edit(path: str, change) -> None:
    file = ROOT / path
    text = file.read_text(encoding="utf-8")
    new = change(text)
    if new == text:
        raise SystemExit(f"register.py: nothing changed in {path}; is lesson 14 registered already?")
    file.write_text(new, encoding="utf-8")


def registry(text: str) -> str:
    at = text.index("LESSONS: dict[str, Lesson] = _by_number(")
    end = text.index("\n)\n", at)
    text = text[:end] + "\n" + ENTRY + text[end:]
    if 'Part("III"' not in text:
        second = "    Part(\"II\", \"attention in today's models\", \"11\"),\n"
        text = text.replace(second, second + "    Part(\"III\", \"attention at the frontier\", \"13\"),\n")
    return text


def course_total(text: str) -> str:
    text = re.sub(r"(\| 1[23] \| `my_[^\n]*\n)(\| \*\*course\*\*)",
                  r"\1| 14 | `my_absorbed_scores` (4), `my_topk_keys` (2) | 6 |\n\2", text, count=1)
    return re.sub(r"\| \*\*course\*\* \| (\d+) exercises \| \*\*(\d+)\*\* \|",
                  lambda m: f"| **course** | {int(m[1]) + 2} exercises | **{int(m[2]) + 6}** |", text,
                  count=1)


def wrong_answers(text: str) -> str:
    text = text.replace(MISTAKES_TABLE, MISTAKE_HELPERS + MISTAKES_TABLE, 1)
    return text.replace(LAST_MISTAKE, LAST_MISTAKE + MISTAKES, 1)


def main() -> None:
    for folder in ("figures", "explorers", "exercises", "quizzes"):
        git("mv", f"staging/lesson14/lessons_lib/{folder}/{NAME}.py", f"lessons_lib/{folder}/{NAME}.py")
    git("mv", "staging/lesson14/notebooks/14_latent_and_sparse.ipynb", "notebooks/14_latent_and_sparse.ipynb")
    for test in sorted((HERE / "tests").rglob("test_*.py")):
        git("mv", str(test.relative_to(ROOT)), str(Path("tests") / test.relative_to(HERE / "tests")))
    edit("lessons_lib/course/lessons.py", registry)
    edit("lessons_lib/exercises/__init__.py", lambda t: re.sub(
        r"(\n=+  =+  =+\n)(?![\s\S]*\n=+  =+  =+\n)", lambda m: "\n" + EXERCISE_ROWS + m[1], t, count=1))
    edit("lessons_lib/explorers/base.py", lambda t: re.sub(
        r"(\n=+  =+  =+\n\n:class:`ExplorerBase`)", lambda m: EXPLORER_ROW + m[1], t, count=1))
    edit("tests/helpers/wrong_answers.py", wrong_answers)
    edit("docs/classroom.md", course_total)
    edit("docs/teaching.md", lambda t: t.replace("<!-- outcomes:end -->", OUTCOME + "<!-- outcomes:end -->")
         .rstrip("\n") + "\n\n" + TEACHING.strip("\n") + "\n")
    shutil.rmtree(ROOT / "staging")
    print("lesson 14 registered; now link lesson 13 on to it, then run tools/teaching_times.py --write "
          "notebooks/14_latent_and_sparse.ipynb, tools/term_plan.py --write, make notebooks, make check "
          "(the staging README, now removed, is in git's history).")


if __name__ == "__main__":
    main()
