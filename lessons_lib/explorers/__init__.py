"""Explorers, sliders beside live figures: ``base`` (the explorer contract: controls, live figures, the
polite live region, a still picture for static pages) and ``lessonNN_name.py`` (each lesson's explorers).
"""
