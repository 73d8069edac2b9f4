"""What a teacher's nbgrader takes from the course: the late penalty, and a light feedback page.

Learners never import this module (it has no ``__all__``, so ``lessons_lib`` does not re-export it); the
teacher's ``nbgrader_config.py``, written by ``tools/hub_grading.py teacher``, calls :func:`configure`::

    from lessons_lib.course import grading_policy
    grading_policy.configure(c, percent_per_day=10)

**Late work.** nbgrader compares each submission's time with its lesson's due date, the learner's
extension added (both in the gradebook: ``tools/hub_grading.py deadlines`` writes them from the course's
``deadlines.toml``), and asks the late-penalty plugin what a late submission loses. :class:`LatePenalty`
takes ``percent_per_day`` of the score for every day begun after the due date (the course's default,
10 %, so that a day late costs 10 % and ten days cost everything; 0 turns penalties off), never more
than the score.

**The feedback page.** nbgrader's own page loads MathJax from a CDN (raw LaTeX on a hub without the
internet), inlines Bootstrap and carries every figure of the lesson again: about 590 kB. The learner
already has the lesson; the feedback is about the grade. :class:`FeedbackDigest` keeps what explains the
grade: the title and headings (to find one's way), every code cell's source, the output of the
exercises' checks and graded cells (the named mistake, its hint, the failing case), errors, and nothing
else; it opens the page with the submission's time against its due date and, when late, the penalty.
The template (``feedback_templates/light/light.html.j2``, nbgrader's feedback page with its head
replaced) has a small stylesheet of its own and no script at all: math stays as the learner typed it. Its
body is in landmarks: a header with the page's one level-one heading (the score) and a nav of the graded
cells, then the notebook in main (axe-core checks it: tests/grading/test_nbgrader_pipeline.py). A page is a
few tens of kB.

**Whose submission.** nbgrader names a submission in its exchange after the learner it claims to be
(``<student>+<lesson>+<time>``), which the learner's own process writes. Where every learner has a Unix
account of their own (The Littlest JupyterHub), the folder's owner is who really handed it in: nbgrader's
``collect`` only warns when the two differ ("cheating attempt?") and collects it anyway, and with
``--update`` a forged later submission replaces the real one. :class:`OwnedCollect` keeps only the
submissions owned by the account they name (``tools/hub_grading.py teacher --per-learner-accounts`` turns
it on; on a hub where one account runs every server, ownership tells nothing, and the upload route is the
one for credit: docs/classroom.md).
"""

from __future__ import annotations

import datetime
import math
import os
from pathlib import Path

import nbformat
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.plugins import BasePlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, validate

#: the course's late penalty unless the teacher's config says otherwise: a share of the score per day begun
PERCENT_PER_DAY = 10.0
#: the folder of nbconvert templates that holds the light feedback page (``light``)
TEMPLATES = Path(__file__).with_name("feedback_templates")
FEEDBACK_TEMPLATE = "light"  # a template folder whose base is nbgrader's "feedback" ...
FEEDBACK_FILE = "light.html.j2"  # ... and its page, which extends nbgrader's index.html.j2
DAY = 86400.0
#: outputs a feedback page keeps for a cell that is not a check or a graded cell: the errors
KEPT_OUTPUTS = ("error",)


def days_begun(seconds_late: float) -> int:
    """Days begun after the due date: 1 for a minute late, 2 for 24 h and a minute."""
    return max(0, math.ceil(seconds_late / DAY))


class LatePenalty(BasePlugin):
    """nbgrader's late-submission plugin for this course: ``percent_per_day`` of the score for each day
    begun after the (extended) due date, at most the whole score."""

    percent_per_day = Float(PERCENT_PER_DAY, help="The share of the score, in percent, that a late "
                            "submission loses for each day begun after its due date (0: no penalty)."
                            ).tag(config=True)

    @validate("percent_per_day")
    def _a_percentage(self, proposal):
        value = proposal["value"]
        if not 0 <= value <= 100:
            raise ValueError(f"LatePenalty.percent_per_day is a percentage from 0 to 100; got {value}")
        return value

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float:
        """The points ``student_id``'s notebook loses for being ``total_seconds_late`` late."""
        days = days_begun(total_seconds_late)
        penalty = min(score, score * self.percent_per_day / 100 * days)
        self.log.info("%s is late by %d day(s) begun: penalty %.2f of %.2f", student_id, days, penalty, score)
        return penalty


def _when(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _lateness(seconds: float) -> str:
    days, rest = divmod(int(seconds), int(DAY))
    hours, minutes = rest // 3600, rest % 3600 // 60
    parts = [f"{days} day{'s' if days != 1 else ''}" if days else "",
             f"{hours} hour{'s' if hours != 1 else ''}" if hours else "",
             f"{minutes} minute{'s' if minutes != 1 else ''}" if minutes and not days else ""]
    return " ".join(p for p in parts if p) or "less than a minute"


def lateness_notice(timestamp: datetime.datetime | None, due: datetime.datetime | None, extended: bool,
                    penalty: float, score: float, percent_per_day: float) -> str | None:
    """The first lines of a feedback page: when the work came in against its due date, and what lateness
    cost. None when the lesson has no due date or the time of the submission is unknown."""
    if due is None or timestamp is None:
        return None
    deadline = f"due {_when(due)}" + (", your extension included" if extended else "")
    late = (timestamp - due).total_seconds()
    if late <= 0:
        return f"**Handed in on time:** {_when(timestamp)} ({deadline})."
    rule = (f"{percent_per_day:g} % of the score for each day begun after the due date" if percent_per_day
            else "this course takes no points for late work")
    cost = (f"Late penalty: −{penalty:.2f} of your {score:.2f} points, so your grade is "
            f"{max(0.0, score - penalty):.2f} ({rule})." if penalty else f"No points taken ({rule}).")
    return (f"**Handed in late:** {_when(timestamp)}, {_lateness(late)} after the due date ({deadline}). "
            f"{cost}")


def _is_heading(cell) -> bool:
    return cell.cell_type == "markdown" and cell.source.lstrip().startswith("#")


def _grading_cell(cell) -> bool:
    """A cell whose output explains the grade: nbgrader's cells, and the exercises' interactive checks."""
    meta = cell.metadata.get("nbgrader", {})
    return bool(meta.get("grade") or meta.get("locked") or meta.get("solution"))


class FeedbackDigest(NbGraderPreprocessor):
    """The notebook of a feedback page, cut to what explains the grade (see the module's docstring), with
    the lateness notice on top. Runs after nbgrader's ``GetGrades`` (which reads the score and penalty);
    enabled, as nbgrader's own preprocessors are (nbconvert's are off until enabled)."""

    def preprocess(self, nb, resources):
        cells = []
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                if _is_heading(cell) or _grading_cell(cell):
                    if not _grading_cell(cell):
                        cell.source = cell.source.lstrip().split("\n", 1)[0]
                    cells.append(cell)
                continue
            if cell.cell_type != "code":
                continue
            if not _grading_cell(cell):
                cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") in KEPT_OUTPUTS]
            else:
                cell.outputs = [_without_widgets(o) for o in cell.get("outputs", [])]
            cells.append(cell)
        notice = self.notice(resources)
        nb.cells = ([nbformat.v4.new_markdown_cell(notice)] if notice else []) + cells
        nb.metadata.pop("widgets", None)  # the widget state of every slider: the bulk of a saved lesson
        return nb, resources

    def notice(self, resources) -> str | None:
        """The lateness notice of this learner's submission, from the gradebook."""
        from nbgrader.api import Gradebook, MissingEntry

        info = resources.get("nbgrader", {})
        if "db_url" not in info:
            return None
        try:
            with Gradebook(info["db_url"]) as gb:
                submission = gb.find_submission(info["assignment"], info["student"])
                notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
                due, timestamp = submission.duedate, submission.timestamp
                extended = submission.extension is not None
                penalty, score = notebook.late_submission_penalty or 0.0, notebook.score
        except MissingEntry:
            return None
        percent = self.config.get("LatePenalty", {}).get("percent_per_day", PERCENT_PER_DAY)
        return lateness_notice(timestamp, due, extended, penalty, score, percent)


def _without_widgets(output):
    """An output without a widget view (its model is not on the page): its text form instead."""
    data = output.get("data")
    if data and "application/vnd.jupyter.widget-view+json" in data:
        output["data"] = {k: v for k, v in data.items() if k == "text/plain"}
    return output


def owner(path: str | Path) -> str:
    """The name of the account that owns ``path`` ("uid N" for an account with no name)."""
    import pwd

    uid = os.stat(path).st_uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


class OwnedCollect(ExchangeCollect):
    """nbgrader's collect, keeping only the submissions whose folder is owned by the account they name: of
    each learner's own submissions the latest (or, with ``--before-duedate``, the latest in time) counts,
    and one filed under their name by another account is left out, with a line in the log."""

    def _path_to_record(self, path):
        record = super()._path_to_record(path)
        record["owner"] = owner(path)
        if record["owner"] != record["username"]:
            self.log.warning("Left out %s: it is filed as %s's submission but the account %s made it; only a "
                             "learner's own account hands in their work", record["filename"],
                             record["username"], record["owner"])
        return record

    def _sort_by_timestamp(self, records):
        # the learner's own submissions first, so that nbgrader picks among them
        return sorted(records, key=lambda r: (r["owner"] == r["username"], r["timestamp"]), reverse=True)

    def copy_files(self):
        # a name with no submission of its own account has only others' left: none is collected
        self.src_records = [r for r in self.src_records if r["owner"] == r["username"]]
        super().copy_files()


def configure(c, percent_per_day: float = PERCENT_PER_DAY) -> None:
    """Set the course's grading policy in an nbgrader config ``c``: the late penalty (:class:`LatePenalty`,
    ``percent_per_day``) and the light feedback page (:class:`FeedbackDigest` and its template)."""
    import nbgrader
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    c.AssignLatePenalties.plugin_class = LatePenalty
    c.LatePenalty.percent_per_day = float(percent_per_day)
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, FeedbackDigest]
    nbgrader_templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    c.HTMLExporter.template_name = FEEDBACK_TEMPLATE
    c.HTMLExporter.template_file = FEEDBACK_FILE
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(nbgrader_templates)]
