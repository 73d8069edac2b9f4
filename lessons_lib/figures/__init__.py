"""Figures: ``style`` (one look: colormaps, fonts, masked cells hatched, never drawn as 0; the WCAG
contrast ratio), ``base`` (heatmap, figure helpers), ``attention_maps`` (the stills several lessons show:
scores, weights, one query's weights, every head), ``tables`` (a still's numbers as a collapsed table
beside it, read from what it draws; LaTeX read as words), the stills of each lesson (``lessonNN_name.py``,
each with alt text), and ``live/``, the figures drawn in the browser (the wire format, one module per figure
kind, ``live_figures.js`` and ``.css`` shipped in the package, no CDN, no build step, each figure's numbers
as a table behind a button; ``access``: a group's live region and its controls' accessible names).
"""
