"""Quizzes: model.py (questions), widget.py (the widgets, show), lessonNN_name.py (questions as data)."""
