"""The course around the lessons: the environment check, the paper guide, the feedback box."""
