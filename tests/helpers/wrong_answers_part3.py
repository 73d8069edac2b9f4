"""Wrong answers to Part III's exercises (lessons 13 and 14), written the way learners write them, with the
words their feedback must say: :data:`PART_III`, which ``tests/helpers/wrong_answers.py`` adds to its
``MISTAKES`` (one file per part keeps each under 600 lines)."""

from __future__ import annotations

import numpy as np

import lessons_lib as ll


def _linear_step(phi_q=True, phi_k=True, normalise=True, flipped=False, read_old=False, keep_z=False):
    """``my_linear_attention_step`` as a learner writes it, with one mistake."""
    def my_linear_attention_step(state, z, q, k, v):
        fq = np.where(q > 0, q + 1, np.exp(np.minimum(q, 0))) if phi_q else q
        fk = np.where(k > 0, k + 1, np.exp(np.minimum(k, 0))) if phi_k else k
        new = state + (v[:, None] * fk[None, :] if flipped else fk[:, None] * v[None, :])
        new_z = z if keep_z else z + fk
        read, total = (state, z) if read_old else (new, new_z)
        out = read.T @ fq
        return new, new_z, out / (fq @ total) if normalise else out
    return my_linear_attention_step


def _causal(phi=True, mask="tril", counted="masked", normalise="rows"):
    """``my_causal_linear_attention`` as a learner writes it, with one mistake: ``mask`` keeps the lower
    triangle ("tril"), nothing ("none"), the upper one ("triu") or the strict lower one ("strict");
    ``counted``: the total of the masked or the unmasked similarities; ``normalise`` over the rows, the
    columns, or not at all."""
    def my_causal_linear_attention(Q, K, V):
        fq = np.where(Q > 0, Q + 1, np.exp(np.minimum(Q, 0))) if phi else Q
        fk = np.where(K > 0, K + 1, np.exp(np.minimum(K, 0))) if phi else K
        scores = fq @ fk.T
        weights = {"tril": np.tril(scores), "none": scores, "triu": np.triu(scores),
                   "strict": np.tril(scores, k=-1)}[mask]
        total = weights if counted == "masked" else scores
        if normalise == "none":
            return weights @ V
        if normalise == "columns":
            return (weights @ V) / total.sum(axis=0)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            return (weights @ V) / total.sum(axis=-1, keepdims=True)
    return my_causal_linear_attention


def _delta(change, flipped=False):
    """``my_delta_step`` as a learner writes it: ``change(state, k, v, beta)`` is what row k receives."""
    def my_delta_step(state, k, v, beta):
        c = change(state, k, v, beta)
        return state + (np.outer(c, k) if flipped else np.outer(k, c))
    return my_delta_step


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


#: (exercise, a learner's wrong function, the mistake its check must name, words its message and hint say)
PART_III = [
    # lesson 13
    ("my_linear_attention_step", _linear_step(phi_q=False, phi_k=False), "phi_forgotten",
     ["raw query or key"]),
    ("my_linear_attention_step", _linear_step(phi_q=False), "phi_forgotten", ["φ(q) and φ(k)"]),
    ("my_linear_attention_step", _linear_step(normalise=False), "no_normaliser", ["raw read-out"]),
    ("my_linear_attention_step", _linear_step(flipped=True), "outer_flipped", ["other way round"]),
    ("my_linear_attention_step", _linear_step(read_old=True), "read_before_write", ["does not see itself"]),
    ("my_linear_attention_step", _linear_step(keep_z=True), "z_not_moved", ["normaliser z does not"]),
    ("my_causal_linear_attention", _causal(mask="none"), "future_leaks", ["the future leaks"]),
    ("my_causal_linear_attention", _causal(mask="triu"), "future_leaks", ["come after it"]),
    ("my_causal_linear_attention", _causal(counted="unmasked"), "future_in_normaliser",
     ["leaks through the normaliser"]),
    ("my_causal_linear_attention", _causal(mask="strict"), "itself_excluded", ["own token out"]),
    ("my_causal_linear_attention", _causal(normalise="none"), "no_normaliser", ["raw weighted values"]),
    ("my_causal_linear_attention", _causal(normalise="columns"), "normaliser_wrong_axis",
     ["wrong axis"]),
    ("my_causal_linear_attention", _causal(phi=False), "phi_forgotten", ["raw queries or keys"]),
    ("my_delta_step", _delta(lambda S, k, v, b: b * v), "not_corrected", ["never takes away"]),
    ("my_delta_step", _delta(lambda S, k, v, b: b * v - S.T @ k), "beta_on_one_term", ["whole error"]),
    ("my_delta_step", _delta(lambda S, k, v, b: v - b * (S.T @ k)), "beta_on_one_term", ["one side"]),
    ("my_delta_step", _delta(lambda S, k, v, b: b * (v - S.T @ k), flipped=True), "outer_flipped",
     ["other way round"]),
    ("my_delta_step", _delta(lambda S, k, v, b: b * (v - S @ k)), "read_wrong_side", ["wrong axis"]),
    ("my_delta_step", _delta(lambda S, k, v, b: b * (S.T @ k - v)), "wrong_sign", ["wrong direction"]),
    # lesson 14
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
]
