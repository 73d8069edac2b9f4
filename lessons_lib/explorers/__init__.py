"""Explorers: sliders beside live figures; base.py holds the contract, lessonNN_topic.py a lesson's."""
