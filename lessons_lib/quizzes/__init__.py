"""Quizzes: model.py (questions, options), widget.py (the widgets, show), lessonNN_topic.py (questions as data)."""
