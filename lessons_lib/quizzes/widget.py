"""The quizzes as widgets: one :class:`Quiz` per lesson, shown with :func:`show`."""

from __future__ import annotations

import html
import importlib
import pkgutil
from pathlib import Path

from .._checks import is_whole_number
from ..course.feedback import FAILED, NOT_ATTEMPTED, PASSED, box_html
from ..figures.live.access import Access, control_entry
from .model import LETTERS, Question

__all__ = ["Quiz", "QUIZZES", "show"]


def _collect() -> dict[str, tuple[Question, ...]]:
    """lesson id ("07") -> its questions: the QUESTIONS of every ``lessonNN_name`` module beside this one."""
    found = {}
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name.startswith("lesson"):
            found[info.name[6:8]] = importlib.import_module(f".{info.name}", __package__).QUESTIONS
    return found


#: lesson id -> its questions (each lesson's file ``quizzes/lessonNN_name.py`` holds them as data)
QUIZZES: dict[str, tuple[Question, ...]] = _collect()


def _lesson_questions(lesson_id) -> tuple[str, tuple[Question, ...]]:
    key = f"{lesson_id:02d}" if isinstance(lesson_id, int) and not isinstance(lesson_id, bool) else lesson_id
    if not isinstance(key, str):
        raise TypeError(f"lesson_id must be a string such as \"02\"; got {lesson_id!r}.")
    if key not in QUIZZES:
        raise ValueError(f"There is no quiz for lesson {lesson_id!r}; quizzes exist for {sorted(QUIZZES)}.")
    return key, QUIZZES[key]


# --------------------------------------------------------------------------- widgets


class QuestionView:
    """One question as widgets: the prompt and lettered options (HTML), A/B/C/D radio buttons,
    a Check button and a feedback area. ``select`` and ``check`` drive it without a browser.

    For screen readers (:meth:`access_entries`, set by the quiz's :class:`Access`): the radio buttons
    are a group named by the question, each option named by its letter and full text, and the feedback
    area is a status region, so the feedback is said when Check is pressed."""

    def __init__(self, question: Question, number: int, respond=None):
        import ipywidgets as widgets

        self.question, self.number = question, number
        #: respond(view, choice) -> the feedback text for a pick (default: the question's own feedback)
        self.respond = respond or (lambda view, choice: view.question.feedback(choice))
        items = "".join(f"<li><strong>{LETTERS[i]}.</strong> {html.escape(o.text)}</li>"
                        for i, o in enumerate(question.options))
        self.prompt = widgets.HTML(
            f'<div style="font-size:1.05em;line-height:1.45"><p><strong>Q{number}.</strong> '
            f'{html.escape(question.prompt)}</p>'
            f'<ul style="list-style:none;padding-left:0.5em">{items}</ul></div>'
        )
        self.choices = widgets.RadioButtons(
            options=[(LETTERS[i], i) for i in range(len(question.options))], value=None,
            description="Your answer:", orientation="horizontal", style={"description_width": "initial"},
            layout=widgets.Layout(width="auto"),
        )
        self.choices.add_class("lessons-quiz-choices")
        self.choices.add_class(f"lessons-quiz-choices-{number}")
        self.button = widgets.Button(description="Check", tooltip=f"Check your answer to question {number}",
                                     icon="check", button_style="primary",
                                     layout=widgets.Layout(margin="0 0 0 1em"))
        self.button.add_class("lessons-quiz-check")
        self.feedback = widgets.HTML("")
        self.feedback.add_class("lessons-quiz-feedback")
        self.feedback.add_class(f"lessons-quiz-feedback-{number}")
        self.button.on_click(lambda _button: self.check())
        self.choices.observe(self._clear_feedback, names="value")
        # in a narrow column (400 % zoom) the Check button goes under the options instead of past the edge
        row = widgets.HBox([self.choices, self.button],
                           layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        self.widget = widgets.VBox([self.prompt, row, self.feedback])

    def access_entries(self) -> list[dict]:
        """The names a screen reader gives this question's controls: the radio group (the question), each
        option (its letter and full text), the feedback area (a status region)."""
        n, q = self.number, self.question
        options = [f"{LETTERS[i]}. {o.text}" for i, o in enumerate(q.options)]
        return [control_entry(f"lessons-quiz-choices-{n}", f"Q{n}. {q.prompt}", options=options),
                control_entry(f"lessons-quiz-feedback-{n}", status=True)]

    def _clear_feedback(self, _change) -> None:
        """A new pick makes the old feedback stale: clear it until Check is pressed again."""
        self.feedback.value = ""

    def select(self, choice) -> None:
        """Pick an option by letter, index or text (as a learner clicking a radio button)."""
        self.choices.value = self.question.index_of(choice)

    def check(self) -> str:
        """Show and return the feedback for the current pick (as the Check button does)."""
        text = self.respond(self, self.choices.value)
        self.feedback.value = _feedback_html(text)
        return text


def _feedback_html(text: str) -> str:
    """The quiz's feedback text in the course's feedback box (the same look as the exercise checks)."""
    status = PASSED if text.startswith("✓") else FAILED if text.startswith("✗") else NOT_ATTEMPTED
    first, *rest = text.split("\n")
    body = f"<div>{html.escape(first)}</div>"
    if rest:
        body += f"<div style='margin-top:0.3em'><em>{html.escape(rest[0])}</em></div><ul>"
        body += "".join(f"<li>{html.escape(line)}</li>" for line in rest[1:]) + "</ul>"
    # the feedback area around the box is the status region (the quiz's Access makes it one)
    return box_html(status, body, css_class="lessons-quiz-box", live=False)


class Quiz:
    """The quiz of one lesson, as widgets (``.widget``: a tab per question) and as text.

    Displays itself in Jupyter; its plain-text form (what GitHub, nbviewer and nbval
    see) lists the questions and options without the answers. ``answer`` picks an
    option and returns the feedback text, for tests and headless use.
    """

    def __init__(self, lesson_id, *, questions=None, title: str = "", respond=None):
        """The quiz of lesson ``lesson_id``; or, given ``questions``, a quiz of those under ``title``,
        whose Check answers with ``respond(view, choice)`` (see :class:`QuestionView`)."""
        import ipywidgets as widgets

        if questions is None:
            self.lesson_id, self.questions = _lesson_questions(lesson_id)
        else:
            self.lesson_id, self.questions = lesson_id, tuple(questions)
        self.title = title or f"Quiz, lesson {self.lesson_id}"
        self.views = [QuestionView(q, n, respond) for n, q in enumerate(self.questions, start=1)]
        title = widgets.HTML(f"<h3>{html.escape(self.title)}: check your understanding</h3>")
        # one question at a time, a tab each: a quiz stays one screen high (also on a projector slide,
        # where a class discusses one question at a time) however many questions the lesson asks
        self.tabs = widgets.Tab(children=[view.widget for view in self.views],
                                titles=[f"Q{n}" for n in range(1, len(self.views) + 1)])
        self.tabs.add_class("lessons-quiz-tabs")
        self.access = Access(scope=".lessons-quiz",
                             controls=[e for view in self.views for e in view.access_entries()])
        self.widget = widgets.VBox([title, self.tabs, self.access])
        self.widget.add_class("lessons-quiz")

    def answer(self, question: int, choice) -> str:
        """Pick ``choice`` (letter, index or text) in question ``question`` (0-based) and check it."""
        if not is_whole_number(question) or not 0 <= question < len(self.views):
            raise ValueError(f"question must be an index 0-{len(self.views) - 1}; got {question!r}.")
        view = self.views[question]
        view.select(choice)
        return view.check()

    def text(self) -> str:
        lines = [f"{self.title} ({len(self.questions)} questions; run the notebook to check your answers)"]
        return "\n\n".join([*lines, *(q.text(n) for n, q in enumerate(self.questions, start=1))])

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.text()
        return bundle


def show(lesson_id) -> None:
    """Display the quiz of a lesson (e.g. ``show("04")``) below the current cell.

    Returns nothing, so the quiz shows once; use :class:`Quiz` for an object to drive.
    """
    from IPython.display import display

    display(Quiz(lesson_id))
