"""Figures: style (the one look), base (heatmap, helpers), the stills of each lesson, live/ (drawn in the browser)."""
