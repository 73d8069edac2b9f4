"""Quizzes: model.py (questions), widget.py (the widgets, show), lessonNN_topic.py (questions as data)."""
