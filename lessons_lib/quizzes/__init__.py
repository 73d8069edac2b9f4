"""Quizzes that explain every option: ``model`` (questions, options), ``widget`` (the quiz widgets,
``ll.show("04")``), ``concepts`` (the ungraded concept quiz that opens lesson 00 and closes lesson 10, its
first answers kept for the class report), ``lessonNN_name.py`` (each lesson's questions, as data).
"""
