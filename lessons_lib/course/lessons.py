"""The lessons of the course, one entry each: the one place a lesson's identity is written.

Each :class:`Lesson` holds what the tools, the tests, the teacher's guide and the course maps read:

* ``slug``: the notebook's name, ``07_causal_masking``. The number is its first two digits, the notebook
  is ``notebooks/07_causal_masking.ipynb``, and every part of the lesson in ``lessons_lib`` carries the
  same name: ``figures/``, ``explorers/``, ``exercises/`` and ``quizzes/lesson07_causal_masking.py``;
* ``title``: the notebook's first heading after ``NN ·``; ``short``: the title in the course maps
  (lesson 00, the README) and the teacher's guide; ``summary``: what a learner does in it, for the maps;
* ``minutes``: measured, never typed: ``tools/teaching_times.py --write`` times the lesson from a clean
  kernel and rewrites this number; ``--stamp`` writes it wherever the course states a time;
* ``torch``: whether the lesson needs PyTorch (the CPU build is enough): its kernel imports it. A lesson
  without it may still compare itself with transformers where that is installed, which brings torch
  along (lesson 14's last section); the teacher's guide, the README and lesson 00 list these lessons
  (``tools/teaching_times.py --stamp``), and ``make test-notebooks`` fails when a lesson's kernel says
  otherwise (``tools/offline_kernel.py report``);
* ``points``: the points of each graded exercise, by the name the learner defines (``my_softmax``);
  ``tools/stamp_notebooks.py`` writes them into nbgrader's metadata;
* ``cuts``: the sections to cut when a session runs short, first cut first, as (a piece of the heading,
  what to do instead); ``tools/term_plan.py`` lists them, and shares the lessons out over the term's
  sessions from the measured minutes.

The lessons fall into :data:`PARTS`, each starting at its first lesson: Part I, attention step by step
(00–10), Part II, attention in today's models (11–12), and Part III, attention at the frontier (from 13). A
lesson belongs to the last part that starts at or before it, so a new lesson needs no part of its own; the
course maps, the README, the teacher's guide, the term plan and the learner copy list the lessons under each
part's heading (:func:`lessons_by_part`).

``import lessons_lib`` does not load this module; ``ll.LESSONS`` does, and it imports nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Lesson", "LESSONS", "Part", "PARTS", "part_of", "lessons_by_part"]

_SLUG = re.compile(r"^\d\d_[a-z0-9]+(?:_[a-z0-9]+)*$")


@dataclass(frozen=True)
class Lesson:
    """One lesson: its notebook's name, titles, measured minutes, PyTorch or not, exercise points, cuts."""

    slug: str
    title: str
    short: str
    summary: str
    minutes: int
    torch: bool = False
    points: dict[str, int] = field(default_factory=dict)
    cuts: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if not (isinstance(self.slug, str) and _SLUG.match(self.slug)):
            raise ValueError(f"slug must be the notebook's name, two digits then words joined by '_' "
                             f"(07_causal_masking); got {self.slug!r}.")
        for name in ("title", "short", "summary"):
            value = getattr(self, name)
            if not (isinstance(value, str) and value.strip()):
                raise ValueError(f"lesson {self.number}: {name} must be text; got {value!r}.")
        if not (_whole(self.minutes) and self.minutes > 0):
            raise ValueError(f"lesson {self.number}: minutes must be a positive whole number of minutes (the "
                             f"measured time, written by tools/teaching_times.py --write); got "
                             f"{self.minutes!r}.")
        if not isinstance(self.torch, bool):
            raise ValueError(f"lesson {self.number}: torch must be True or False (does its kernel import "
                             f"PyTorch?); got {self.torch!r}.")
        if not isinstance(self.points, dict):
            raise ValueError(f"lesson {self.number}: points must be a dict of exercise names to points, such "
                             f"as {{'my_softmax': 3}}; got {self.points!r}.")
        for name, points in self.points.items():
            if not (isinstance(name, str) and name.startswith("my_") and _whole(points) and points > 0):
                raise ValueError(f"lesson {self.number}: points must map an exercise's my_… name to a "
                                 f"positive whole number; got {name!r}: {points!r}.")
        _check_cuts(self.cuts, self.number)

    @property
    def number(self) -> str:
        """``"07"``"""
        return self.slug[:2]

    @property
    def notebook(self) -> str:
        """``"notebooks/07_causal_masking.ipynb"`` (relative to the repository)"""
        return f"notebooks/{self.slug}.ipynb"

    @property
    def module(self) -> str:
        """``"lesson07_causal_masking"``: the name of the lesson's file in each per-lesson folder"""
        return f"lesson{self.slug}"

    @property
    def stated_minutes(self) -> int:
        """The lesson's time as the course states it: the measured minutes rounded to 5."""
        return stated_minutes(self.minutes)


def _whole(value) -> bool:
    """An int that is not a bool (True is 1 to Python, never a number of minutes or points here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_cuts(cuts, number: str) -> None:
    """``cuts``: a tuple of (a piece of a section's heading, what to do instead) pairs of text."""
    example = '(("Quiz", "set it as homework"),)'
    if not isinstance(cuts, tuple):
        raise ValueError(f"lesson {number}: cuts must be a tuple of (a piece of a heading, what to do "
                         f"instead) pairs, such as {example}; got {cuts!r}.")
    for cut in cuts:
        if not (isinstance(cut, tuple) and len(cut) == 2
                and all(isinstance(part, str) and part.strip() for part in cut)):
            raise ValueError(f"lesson {number}: each cut is a pair of texts (a piece of the heading, what to "
                             f"do instead), such as {example}; got {cut!r}. A single cut needs its trailing "
                             f"comma: ((\"Quiz\", \"set it as homework\"),).")
    pieces = [piece for piece, _ in cuts]
    if len(set(pieces)) != len(pieces):
        raise ValueError(f"lesson {number}: a section is cut once; {pieces} names one twice.")


def stated_minutes(minutes: int) -> int:
    """A time as the course states it: measured minutes rounded to 5 (at least 5)."""
    return max(5, 5 * round(minutes / 5))


def torch_lessons() -> list[str]:
    """The lessons whose kernels import PyTorch (their ``torch``), by number, in course order: the one list
    of them (the environment check of lesson 00, the teacher's guide, the README and lesson 00's text)."""
    return [number for number, lesson in LESSONS.items() if lesson.torch]


def _by_number(*lessons: Lesson) -> dict[str, Lesson]:
    table = {lesson.number: lesson for lesson in lessons}
    if len(table) != len(lessons) or list(table) != sorted(table):
        raise ValueError(f"lessons must be listed once each, in order; got {[x.number for x in lessons]}")
    return table


@dataclass(frozen=True)
class Part:
    """A part of the course: its number (``"II"``), its title, and the lesson it starts with (``"11"``)."""

    number: str
    title: str
    first: str

    @property
    def heading(self) -> str:
        """``"Part II · attention in today's models"``: how the maps and guides head its lessons."""
        return f"Part {self.number} · {self.title}"


#: The parts of the course, in order; each runs from its first lesson to the next part's.
PARTS: tuple[Part, ...] = (
    Part("I", "attention, step by step", "00"),
    Part("II", "attention in today's models", "11"),
    Part("III", "attention at the frontier", "13"),
)


def part_of(lesson: str | Lesson) -> Part:
    """The part lesson ``"07"`` (or its entry) belongs to: the last part starting at or before it."""
    number = lesson.number if isinstance(lesson, Lesson) else str(lesson)
    return [part for part in PARTS if part.first <= number][-1]


def lessons_by_part() -> list[tuple[Part, list[Lesson]]]:
    """``[(part, its lessons in order), ...]``: what the maps list under each part's heading."""
    return [(part, [lesson for lesson in LESSONS.values() if part_of(lesson) is part]) for part in PARTS]


#: lesson number ("07") -> its entry, in course order
LESSONS: dict[str, Lesson] = _by_number(
    Lesson(
        slug="00_start_here",
        title="Start here",
        short="Start here",
        summary="how the course works, setup check, the formula and this map",
        minutes=35,
        cuts=(("The course map", "point at the README's map"), ("Quiz", "set it as homework")),
    ),
    Lesson(
        slug="01_why_attention",
        title="Why attention? Context changes meaning",
        short="Why attention?",
        summary="context changes meaning; Q/K/V as a soft database lookup",
        minutes=42,
        points={"my_query": 2},
        cuts=(("What attention is not", "read at home"), ("Quiz", "set it as homework"),
              ("A lookup you already know",
               "say it in one sentence: a dict raises KeyError, softmax blends")),
    ),
    Lesson(
        slug="02_step1_qkv",
        title="Step 1: Q, K, V",
        short="Step 1: Q, K, V",
        summary="Q = X·W_Q, K = X·W_K, V = X·W_V with the shapes drawn; why three",
        minutes=41,
        points={"my_projection": 3},
        cuts=(("Quiz", "set it as homework"), ("Why three projections", "keep one discussion question")),
    ),
    Lesson(
        slug="03_step2_scores",
        title="Step 2: Scores = Q·Kᵀ",
        short="Step 2: scores Q·Kᵀ",
        summary="all pairwise dot products in one product; the score heatmap",
        minutes=36,
        points={"my_scores": 3},
        cuts=(("need not come from the same tokens", "mention L × S when the explorer shows it"),
              ("Quick quiz", "set it as homework")),
    ),
    Lesson(
        slug="04_step3_scale_softmax",
        title="Step 3: Weights = softmax(Scores / √d_k)",
        short="Step 3: scale and softmax",
        summary="why divide by √d_k; softmax turns each row into weights that sum to 1",
        minutes=52,
        points={"my_softmax": 3, "my_scale": 2},
        cuts=(("Quick quiz", "set it as homework"),
              ("What goes wrong without it", "show the explorer's unscaled panel instead")),
    ),
    Lesson(
        slug="05_step4_weighted_values",
        title="Step 4: Output = Weights · V",
        short="Step 4: weights·V",
        summary="each output is a weighted average of the values; the full pipeline explorer",
        minutes=39,
        points={"my_weighted_sum": 3},
        cuts=(("A context-aware vector", "read at home"), ("Quick quiz", "set it as homework")),
    ),
    Lesson(
        slug="06_multi_head",
        title="Multi-head attention",
        short="Multi-head attention",
        summary="several heads in parallel, concatenated, then W_O",
        minutes=55,
        points={"my_split_heads": 2, "my_merge_heads": 2, "my_next_token_head": 3},
        cuts=(("What does it cost", "read at home"), ("Quick quiz", "set it as homework"),
              ("One big $W_Q$", "state it; the exercise proves it")),
    ),
    Lesson(
        slug="07_causal_masking",
        title="Causal masking",
        short="Causal masking",
        summary="−∞ above the diagonal, so the future cannot leak; other masks",
        minutes=58,
        torch=True,
        points={"my_causal_weights": 3},
        cuts=(("Edge cases", "read at home"), ("Other masks", "show the mask gallery only"),
              ("Quick quiz", "set it as homework")),
    ),
    Lesson(
        slug="08_cost_and_flashattention",
        title="The cost of attention, and FlashAttention",
        short="Cost and FlashAttention",
        summary="the cost of attention, counted and measured; tiling and the online softmax; torch SDPA "
                "on CPU or GPU",
        minutes=66,
        torch=True,
        points={"my_online_update": 4},
        cuts=(("SDPA and its kernels", "read at home (GPU classes: demo it)"),
              ("Quick quiz", "set it as homework"),
              ("Measure: time and memory", "show the recorded figure instead of measuring")),
    ),
    Lesson(
        slug="09_attention_in_action",
        title='Attention in action: a tiny model learns where "it" points',
        short="Attention in action",
        summary='train a tiny model that learns where "it" points; attention sinks',
        minutes=51,
        torch=True,
        points={"my_softmax_off": 3},
        cuts=(("Watching the pattern form", "read at home"), ("Every head of every layer", "read at home"),
              ("Quiz", "set it as homework")),
    ),
    Lesson(
        slug="10_review_and_paper",
        title="Review, and reading the paper",
        short="Review and the paper",
        summary="check your understanding; read Section 3.2 of Vaswani et al. with our code beside it",
        minutes=35,
        torch=True,
        cuts=(("What comes next", "read at home"),),
    ),
    Lesson(
        slug="11_position",
        title="Position: how attention learns order",
        short="Position: RoPE and friends",
        summary="does attention see word order? sinusoids, rotary embeddings (RoPE, two layouts), ALiBi; a "
                "tiny model that needs order",
        minutes=66,
        torch=True,
        points={"my_rope": 4},
        cuts=(("ALiBi", "read at home"), ("Quiz", "set it as homework"),
              ("Two layouts", "say it in one sentence: the exercise's check names the trap")),
    ),
    Lesson(
        slug="12_generation",
        title="Generation: the KV cache, shared heads and long contexts",
        short="Generation: the KV cache",
        summary="generation as a loop; the KV cache filled step by step, timed and sized for real models; "
                "grouped-query attention; sliding windows with sinks; prefill and decode; a Llama read by "
                "the course",
        minutes=117,
        torch=True,
        points={"my_decode_step": 4, "my_rope_step": 2, "my_repeat_kv": 2},
        cuts=(("Look inside", "show the printed agreement only"), ("Quiz", "set it as homework"),
              ("Prefill and decode", "read at home"),
              ("Long contexts", "show the window explorer's first picture only")),
    ),
    Lesson(
        slug="13_cheaper_attention",
        title="Cheaper than attention? Linear attention, state spaces and the delta rule",
        short="Cheaper attention: linear, decay, delta",
        summary="linear attention as a state of fixed size, its three forms checked; a decaying state as "
                "masked attention; the delta rule; what each recalls, measured against softmax attention",
        minutes=74,
        torch=True,
        points={"my_linear_attention_step": 3, "my_causal_linear_attention": 2, "my_delta_step": 3},
        cuts=(("Quiz", "set it as homework"), ("Fading", "show the decay mask only"),
              ("What a state can hold", "show the explorer, and the table from the teacher's run")),
    ),
    Lesson(
        slug="14_latent_and_sparse",
        title="Latent and sparse attention: DeepSeek's MLA and DSA",
        short="Latent and sparse attention",
        summary="DeepSeek's multi-head latent attention: a latent cached per token, the up-projections "
                "folded, the decoupled rope key; DeepSeek-V3.2's sparse attention: a lightning indexer and "
                "each query's top-k keys; both read against transformers",
        minutes=68,
        points={"my_absorbed_scores": 4, "my_topk_keys": 2},
        cuts=(("Read the real thing", "show the printed agreement only"), ("Quiz", "set it as homework"),
              ("What it gives up", "read at home")),
    ),
)
