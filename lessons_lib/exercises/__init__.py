"""Exercises checked with feedback: ``engine`` runs a learner's function on cases and names the mistake, from
``runner`` (the learner's code in a child process under a time limit: ``outcome``, what a call did and how
answers compare; ``child``, what runs in the child; ``processes``, the fork, the time limit and the
stopping; ``wire``, the pipe between them; ``watch``, the hook that names the library's answers a call
reached), ``mistakes``, ``messages`` and
``catalogue`` (the mistakes, their words, the ones any exercise can make); ``grading`` (nbgrader's graded
cells, the unseen cases and their seeds from the teacher's secret, ``read_verdict``); ``judge`` (the
grade's judge: a fresh Python that checks a submission's answers in forked children, never in the learner's
kernel), ``autograde`` (its step in nbgrader's autograde) and ``sandbox`` (where both run a submission's
code: bubblewrap, read-only, no network, nothing left running, not as the grader); ``lessonNN_name.py``
(each lesson's cases, unseen-case generator and candidate mistakes).

In a notebook the learner fills in a function and hands it to its check::

    def my_softmax(x):
        raise NotImplementedError("your code here")   # the placeholder as shipped

    ll.check_softmax(my_softmax)             # -> a Feedback, shown as a coloured box

=================================  ===============================================  ==========================
check                              learner writes                                   notebook
=================================  ===============================================  ==========================
``check_street_query``             ``my_query`` (4 numbers): "it" → "street"        01_why_attention
``check_projection``               ``my_projection(x, w_q, w_k, w_v)``              02_step1_qkv
                                   ``-> (X·W_Q, X·W_K, X·W_V)``
``check_scores``                   ``my_scores(Q, K) -> Q·Kᵀ``                      03_step2_scores
``check_scaling``                  ``my_scale(scores, d_k) -> /√d_k``               04_step3_scale_softmax
``check_softmax``                  ``my_softmax(x)`` (rows, last axis)              04_step3_scale_softmax
``check_weighted_sum``             ``my_weighted_sum(weights, V)``                  05_step4_weighted_values
``check_split_heads``              ``my_split_heads(x, n_heads)``                   06_multi_head
``check_merge_heads``              ``my_merge_heads(heads)``                        06_multi_head
``check_next_token_head``          ``my_next_token_head(seq_len) -> (w_q, w_k)``    06_multi_head
``check_causal_weights``           ``my_causal_weights(scores)``                    07_causal_masking
``check_online_update``            ``my_online_update(m, ell, chunk)``              08_cost_and_flashattention
``check_softmax_off``              ``my_softmax_off(scores)``                       09_attention_in_action
``check_rope``                     ``my_rope(q, k, v, positions, convention)``      11_position
                                   ``-> (Q, K, V)``: RoPE on Q and K
``check_decode_step``              ``my_decode_step(q, k, v, k_cache, v_cache)``    12_generation
                                   ``-> (output, K cache, V cache)``
``check_repeat_kv``                ``my_repeat_kv(kv, n_heads)``: each key/value    12_generation
                                   head for its group of query heads
``check_rope_step``                ``my_rope_step(q, k, past) -> (q, k)``: the      12_generation
                                   new tokens turned where they stand
``check_linear_attention_step``    ``my_linear_attention_step(state, z, q, k, v)``  13_cheaper_attention
                                   ``-> (state, z, output)``: one token
``check_causal_linear_attention``  ``my_causal_linear_attention(Q, K, V)``: every   13_cheaper_attention
                                   token at once, causal, normalised
``check_delta_step``               ``my_delta_step(state, k, v, beta)``: one        13_cheaper_attention
                                   write of the delta rule
``check_absorbed_scores``          ``my_absorbed_scores(q_nope, q_rope, latent,``   14_latent_and_sparse
                                   ``k_rope, w_uk, positions)``: one MLA head's
                                   scores, W_UK folded into the query
``check_topk_keys``                ``my_topk_keys(scores, top_k)``: the keys each   14_latent_and_sparse
                                   query keeps in sparse attention
=================================  ===============================================  ==========================

Layout: :mod:`.engine` runs and diagnoses (an :class:`Exercise`, the rule for naming a
candidate mistake) from four pieces: :mod:`.runner` runs the learner's code (copies of the
inputs, a forked child process killed at the time limit, a watch on the library's answers: :mod:`.outcome`,
:mod:`.child`, :mod:`.processes`, :mod:`.wire`, :mod:`.watch`; what a call changed of the checks' tools
is named by the seal, :mod:`lessons_lib._seal`),
:mod:`.mistakes` holds :class:`Mistake` and its matchers, :mod:`.messages` the feedback's text,
:mod:`.catalogue` the mistakes any exercise can make. :mod:`.grading` turns a check into an
nbgrader graded cell and draws the unseen cases; :mod:`.judge` is the grade's judge, a fresh Python
apart from the learner's kernel that runs a submission's answer cells in forked children, and
:mod:`.autograde` its step in nbgrader's autograde (the course's secret stays there); :mod:`.sandbox`
is where both run (read-only, no network, nothing left running, not as the grader). Each
``lessonNN_name`` module holds one lesson's content, its cases, its generator of unseen cases and its
table of likely mistakes, and is collected here automatically. The engine's docstring says how a later
lesson adds an exercise.
The answers are compared with the library's own reference functions
(:mod:`lessons_lib.core`), never with a solutions file: a learner's copy of
the course holds no solutions, and the checks work there. Calling those reference functions
from the learner's function does not count as an answer (the check says so).
"""

from __future__ import annotations

import importlib
import pkgutil

from .. import _seal
from ..course.feedback import Feedback
from .engine import EXERCISES, TIME_LIMIT_S, Case, Exercise, Mistake, like  # noqa: F401 - for lessons and tests

__all__ = ["Feedback", "EXERCISES"]  # and every content module's check_* functions, added below

def _collect() -> None:
    """Import every ``lesson*`` content module: re-export its ``__all__`` (its check functions)
    and register its :class:`Exercise` objects (also reachable as attributes, e.g. ``SOFTMAX``)."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("lesson"):
            continue
        module = importlib.import_module(f".{info.name}", __name__)
        for name in module.__all__:
            globals()[name] = getattr(module, name)
            __all__.append(name)
        for name, value in vars(module).items():
            if isinstance(value, Exercise) and not name.startswith("_"):
                globals()[name] = value
                EXERCISES[value.name] = value


_collect()
from . import grading  # noqa: E402, F401  (loaded with the rest of the judge, so that the seal records it)

# the engine as it loaded, before a notebook cell can reach it (lessons_lib/_seal.py)
_seal.record_library()
_seal.record_object("EXERCISES", EXERCISES)
