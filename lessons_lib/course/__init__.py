"""The course around the lessons: ``lessons`` (the registry: each lesson's notebook, titles, measured
minutes, PyTorch or not, exercise points and cuts; the tools, tests, guide and course maps read it),
``environment`` (the set-up check of lesson 00), ``paper_guide`` (Vaswani et al. §3.2 beside the code),
``feedback`` (the ✓/✗ box of checks and quizzes), ``project`` (what pyproject.toml says: the version, the
Python floor), ``classroom_server`` (the kernel manager of a class's Jupyter servers), ``grading_policy``
(the late penalty and the light feedback page in a teacher's nbgrader config).
"""
