"""Explorers: sliders beside live figures; base.py holds the contract, lessonNN_name.py a lesson's."""
