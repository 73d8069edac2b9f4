"""A reader's guide to Section 3.2 of Vaswani et al. (2017), "Attention Is All You Need" (arXiv:1706.03762).

Each equation of §3.2 stands beside the line of ``lessons_lib`` that computes it
and the notebook that taught it (notebook 10). The lines are looked up in the
source when the guide is shown, so the file and line number printed are those
of the code that runs; ``tests/course/test_paper_guide.py`` fails if a line is renamed away.

Also: what the paper's sizes (d_model = 512, h = 8, d_k = d_v = 64) mean in the
course's sliders (:func:`paper_sizes`).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Equation", "EQUATIONS", "code_line", "code_lines", "equation_table", "equation_list",
           "paper_sizes", "ARXIV"]

ARXIV = "https://arxiv.org/abs/1706.03762"


@dataclass(frozen=True)
class Equation:
    """One piece of §3.2: the paper's formula, what it says, where the library computes it and where it
    was taught."""

    section: str      # "3.2.1"
    formula: str      # LaTeX, as the paper writes it (our symbols are the same)
    in_words: str
    function: str     # "core.attention.scaled_dot_product_attention": module of lessons_lib and function
    marker: str | tuple[str, ...]  # a piece of the source line (inside that function) that computes it, or
    #                                of each of the few lines that do, in their order
    notebook: str     # the notebook that taught it

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.marker,) if isinstance(self.marker, str) else tuple(self.marker)


EQUATIONS = (
    Equation("3.2.1", r"Q K^\top", "every query against every key: the score of query i for key j is "
             "q_i · k_j",
             "core.attention.attention_scores", "scores = q @ np.swapaxes(k, -1, -2)",
             "03_step2_scores.ipynb"),
    Equation("3.2.1", r"\frac{Q K^\top}{\sqrt{d_k}}",
             "divide by √d_k, so that the spread of the scores does not grow with d_k (footnote 4: "
             "q · k has variance d_k)",
             "core.attention.scaled_dot_product_attention", "factor = 1 / np.sqrt(d_k)",
             "04_step3_scale_softmax.ipynb"),
    Equation("3.2.1", r"\mathrm{softmax}(\cdot)",
             "each row of scores becomes weights that sum to 1",
             "core.attention.softmax_in_place", ("x -= peak", "np.exp(x, out=x)", "x /= total"),
             "04_step3_scale_softmax.ipynb"),
    Equation("3.2.1",
             r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V",
             "equation (1): each output row is the weighted average of the value vectors",
             "core.attention.scaled_dot_product_attention", "output = weighted_values(weights, v)",
             "05_step4_weighted_values.ipynb"),
    Equation("3.2.2", r"\mathrm{head}_i = \mathrm{Attention}(Q W_i^Q, K W_i^K, V W_i^V)",
             "each head projects to its own d_k-wide queries, keys and values, then attends",
             "core.multihead.multi_head_attention", "split_heads(t, n_heads) for t in project_qkv(",
             "06_multi_head.ipynb"),
    Equation("3.2.2",
             r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) W^O",
             "the heads' outputs side by side, mixed back to d_model by W^O",
             "core.multihead.multi_head_attention", "merge_heads(heads) @", "06_multi_head.ipynb"),
    Equation("3.2.3", r"j > i \;\Rightarrow\; \text{score}_{ij} = -\infty",
             "the decoder may not look ahead: the mask allows key j for query i only when j ≤ i",
             "core.masks.causal_mask", "np.tri(", "07_causal_masking.ipynb"),
    Equation("3.2.3", r"e^{-\infty} = 0",
             "masked scores are set to −∞ before the softmax, so those keys get weight exactly 0",
             "core.attention.mask_and_softmax_in_place", "np.putmask(scaled, ~allowed, -np.inf)",
             "07_causal_masking.ipynb"),
)


def _resolve(dotted: str):
    module_name, _, name = dotted.rpartition(".")
    module = importlib.import_module(f"lessons_lib.{module_name}")
    return module, getattr(module, name)


def code_lines(equation: Equation) -> tuple[str, list[tuple[int, str]]]:
    """``("lessons_lib/core/attention.py", [(157, "scores = q @ np.swapaxes(k, -1, -2)")])`` for ``equation``:
    the file, and each line that computes it (number, code), in the order of its markers.

    Raises ``LookupError`` when the function no longer holds a line with one of the markers.
    """
    module, function = _resolve(equation.function)
    lines, start = inspect.getsourcelines(function)
    path = Path(inspect.getsourcefile(module)).resolve()
    package = Path(__file__).resolve().parents[1]
    found = []
    for marker in equation.markers:
        for offset, line in enumerate(lines):
            code = line.split("#", 1)[0].strip()
            if marker in code:
                found.append((start + offset, code))
                break
        else:
            raise LookupError(f"{equation.function} has no line containing {marker!r} any more; "
                              f"update paper_guide.EQUATIONS.")
    return f"lessons_lib/{path.relative_to(package).as_posix()}", found


def code_line(equation: Equation) -> tuple[str, int, str]:
    """``("lessons_lib/core/attention.py", 157, "scores = q @ np.swapaxes(k, -1, -2)")`` for ``equation``:
    its first line (see :func:`code_lines` for all of them)."""
    path, found = code_lines(equation)
    return path, *found[0]


def _chosen(sections) -> list[Equation]:
    """The equations of ``sections`` (all of them for None), with the section numbers checked."""
    if sections is None:
        return list(EQUATIONS)
    known = sorted({eq.section for eq in EQUATIONS})
    if isinstance(sections, str) or not all(isinstance(x, str) for x in sections):
        raise TypeError(f"sections must be a list of section numbers such as ('3.2.1',); got {sections!r}.")
    if unknown := [x for x in sections if x not in known]:
        raise ValueError(f"No equations of section(s) {unknown} in the guide; it has {known}.")
    return [eq for eq in EQUATIONS if eq.section in sections]


def _where(eq: Equation) -> str:
    """Where the library computes ``eq``: its file and line(s), the function, and the lines themselves."""
    path, found = code_lines(eq)
    numbers = f"{found[0][0]}" if len(found) == 1 else f"{found[0][0]}–{found[-1][0]}"
    lines = ", then ".join(f"`{code}`" for _, code in found)
    return f"`{path}:{numbers}` in `{eq.function.split('.')[-1]}`: {lines}"


def equation_table(link_prefix: str = "", *, sections=None) -> str:
    """The guide as a Markdown table: §, the paper's formula, in words, the library's line, the notebook.

    ``sections``: only the equations of these sections (e.g. ``("3.2.1",)``).
    """
    rows = ["| § | in the paper | what it says | computed in `lessons_lib` | taught in |",
            "|---|---|---|---|---|"]
    rows += [f"| {eq.section} | ${eq.formula}$ | {eq.in_words} | {_where(eq)} | "
             f"[{eq.notebook[:2]}]({link_prefix}{eq.notebook}) |" for eq in _chosen(sections)]
    return "\n".join(rows)


def equation_list(link_prefix: str = "", *, sections=None) -> str:
    """The guide as a Markdown list, one entry an equation: narrower than the table, so that each part
    fits a projector slide (lesson 10 shows §3.2.1, then §3.2.2 and §3.2.3)."""
    return "\n".join(f"* **§{eq.section}** ${eq.formula}$: {eq.in_words}.<br>Computed in {_where(eq)}; "
                     f"taught in [{eq.notebook[:2]}]({link_prefix}{eq.notebook})."
                     for eq in _chosen(sections))


def paper_sizes(d_model: int = 512, n_heads: int = 8) -> dict:
    """The paper's base model sizes and what follows from them (§3.2.2): d_k = d_v = d_model / h.

    Returns d_model, h, d_k, d_v, √d_k (the divisor of the scores) and the
    standard deviation of q · k for unit-variance entries before scaling (√d_k as well).
    """
    from .._checks import check_positive_int

    d_model, n_heads = check_positive_int(d_model, "d_model"), check_positive_int(n_heads, "n_heads")
    d_k = d_model // n_heads
    return {"d_model": d_model, "h": n_heads, "d_k": d_k, "d_v": d_k, "sqrt_d_k": d_k ** 0.5,
            "score_std_unscaled": d_k ** 0.5}
