"""Figures: ``style`` (one look: colormaps, fonts, masked cells hatched, never drawn as 0; the WCAG
contrast ratio), ``base`` (heatmap, figure helpers), ``attention_maps`` (the stills several lessons show:
scores, weights, one query's weights, every head), the stills of each lesson (``lessonNN_name.py``, each
with alt text), and ``live/``, the figures drawn in the browser (the wire format, one module per figure
kind, ``live_figures.js`` and ``.css`` shipped in the package, no CDN, no build step; ``access``: a group's
live region and its controls' accessible names).
"""
