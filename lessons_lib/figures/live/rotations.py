"""The live dials of rotary embeddings: one dial per pair of dimensions, where a query and a key turn.

Notebook 11's RoPE explorer draws a query and a key pair by pair: each pair i of a head's dimensions is a
2-D vector, and RoPE turns it by position · θ_i. On dial i the query's piece (a solid arrow, filled head)
has turned by m · θ_i and the key's (a dashed arrow, open head) by n · θ_i; the angle between the two is
(m − n) · θ_i plus where they started, and their dot product is what pair i adds to the score. Under each
dial: θ_i and that share. The arrows share one scale, so the longest piece reaches the rim.

Example::

    dials = RotationDials(title="RoPE, pair by pair", width=560, height=380)
    dials.draw(q_pairs, k_pairs, theta, parts, dims, m=7, n=3)    # (n_pairs, 2), (n_pairs,) ...
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..._checks import as_float_array, check_cells, check_int_in_range, check_whole_number, is_whole_number
from .base import LiveFigure

__all__ = ["RotationDials"]


class RotationDials(LiveFigure):
    """RoPE's pairs as dials: the query's and the key's 2-D pieces, turned, and what each pair adds.

    ``dials`` (sent) holds per pair: its dimensions, θ, the query's and the key's turned pieces, the angles
    they turned by and their dot product. The arrow keys walk the dials (up and down by a row) and read out
    each; hovering does the same.
    """

    NAME = "Rotating pairs"
    _kind = t.Unicode("rotations").tag(sync=True)
    dials = t.List(t.Dict()).tag(sync=True)
    columns = t.Int(4).tag(sync=True)

    def __init__(self, *, title: str = "", width: int = 560, height: int = 380):
        super().__init__(title=title, width=width, height=height)

    def draw(self, q_pairs, k_pairs, theta, parts, dims, *, m: int, n: int, columns: int | None = None,
             title: str | None = None, alt: str | None = None) -> None:
        """Show ``n_pairs`` dials: ``q_pairs``, ``k_pairs`` ``(n_pairs, 2)`` the turned pieces (x, y),
        ``theta (n_pairs,)`` radians per position, ``parts (n_pairs,)`` what each pair adds to the score,
        ``dims (n_pairs, 2)`` the pair's two dimensions; ``m``, ``n`` the query's and the key's positions.
        ``columns`` (default: 4 up to 8 pairs, else 8) dials per row."""
        q = as_float_array(q_pairs, "q_pairs")
        k = as_float_array(k_pairs, "k_pairs")
        if q.ndim != 2 or q.shape[1] != 2 or k.shape != q.shape:
            raise ValueError(f"q_pairs and k_pairs must both be (n_pairs, 2), one 2-D piece per pair; got "
                             f"{q.shape} and {k.shape}.")
        n_pairs = q.shape[0]
        check_cells(n_pairs, (n_pairs,), "q_pairs")
        theta = as_float_array(theta, "theta")
        parts = as_float_array(parts, "parts")
        dims = np.asarray(dims)
        for name, arr, shape in (("theta", theta, (n_pairs,)), ("parts", parts, (n_pairs,)),
                                 ("dims", dims, (n_pairs, 2))):
            if arr.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, one entry per pair; got {arr.shape}.")
        if dims.dtype.kind not in "iu":
            raise TypeError(f"dims must be whole numbers (the dimensions of each pair); got dtype "
                            f"{dims.dtype}.")
        m, n = check_whole_number(m, "m"), check_whole_number(n, "n")
        if columns is None:
            columns = 4 if n_pairs <= 8 else 8
        elif not is_whole_number(columns):
            raise TypeError(f"columns must be a whole number of dials per row; got {columns!r}.")
        columns = check_int_in_range(columns, "columns", 1, 64)
        dials = [{"dims": [int(a), int(b)], "theta": float(th), "q": [float(x) for x in qi],
                  "k": [float(x) for x in ki], "q_turn": float(m * th), "k_turn": float(n * th),
                  "add": float(part)} for (a, b), th, qi, ki, part in zip(dims, theta, q, k, parts)]
        self.send({"dials": dials, "columns": min(columns, max(n_pairs, 1))}, title=title, alt=alt,
                  summary=f"{n_pairs} pairs, the score is their sum, {parts.sum():.2f}")
        self.pairs = {"q": q.copy(), "k": k.copy(), "theta": theta.copy(), "parts": parts.copy()}
