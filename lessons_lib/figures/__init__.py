"""Stills: style (the one look), base (heatmap, helpers), each lesson's stills; live/ draws in the browser."""
