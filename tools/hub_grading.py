"""Grading on the class hub with nbgrader: the exchange, the learners' config, and the teacher's views.

nbgrader comes with the course's hub environment (``binder/requirements.txt``), with five JupyterLab
extensions. Learners use one of them, the *Assignments* tab (fetch, submit, feedback); the teacher's
views, the *Formgrader* and *Create Assignment* (and the course list), are for the teacher only. The
set-up, in three steps, each a subcommand of this tool:

``image``
    In the environment that runs every user's server: turn the teacher's views off for everyone, at the
    environment's level (``jupyter labextension disable --level=sys_prefix`` and ``jupyter server
    extension disable --sys-prefix``, nbgrader's documented way). ``binder/postBuild`` runs it, so the
    image that Binder and Zero to JupyterHub build has it; on The Littlest JupyterHub, ``hub`` runs it.
``hub --exchange /srv/nbgrader/exchange --course-id attention`` (the admin, once, as root)
    ``image``, then the exchange folder, writable by every user and sticky (as ``/tmp``: a learner cannot
    remove what another put there; nbgrader itself makes the course's ``inbound`` folder write-only for
    learners), every user's nbgrader config, ``nbgrader_config.py`` in the environment's config folder
    (``--config-dir``), with the course id and the exchange, and, on The Littlest JupyterHub, the hub's
    setting :data:`SERVER_ENV` (``--jupyterhub-config-dir``).
``teacher --course ~/course`` (the teacher, in a terminal of their own server)
    The teacher's views on again, for the teacher only (at the user's level), and the teacher's nbgrader
    config: the course folder (made, with ``source/``, private to the teacher), the course id, the
    exchange, the course's judge in autograde (``lessons_lib/exercises/autograde.py``), the file of the
    course's secret for the exercises' unseen cases (``~/.lessons-secret``: made once, or refilled when
    empty, blank or too short; readable by the teacher only; the config names it, never holds it), and the
    course's grading policy (:data:`POLICY`: the late penalty, ``percent_per_day`` of the score per day
    begun after a due date, 10 unless the teacher changes it, and the light feedback page;
    ``lessons_lib/course/grading_policy.py``); and ``deadlines.toml`` in the course folder, to fill in
    (:data:`DEADLINES_TEMPLATE`).
``new-secret`` (the teacher, when the secret may have been seen: its file was readable by others, or
    autograde said a submission printed it)
    A fresh secret in ``~/.lessons-secret``, the old one kept aside beside it
    (``~/.lessons-secret.old-<date and time>``): every exercise's unseen cases change with it, for every
    submission graded from then on (:func:`new_secret`).
``deadlines --course ~/course`` (the teacher, whenever the file changes)
    The due date of each lesson and each learner's extension, from the course's ``deadlines.toml``, into
    nbgrader's gradebook, where ``nbgrader autograde`` reads them: a submission later than its due date
    plus the learner's extension loses the late penalty, and its feedback page says when it came in and
    what lateness cost. An extension removed from the file is removed from the gradebook. Run it before
    autograding (again after a change: then autograde again).

The user's level outranks the environment's only with :data:`SERVER_ENV` in every server's environment:
in a virtual or conda environment (TLJH's, repo2docker's) Jupyter reads the environment's config before
the user's unless ``JUPYTER_PREFER_ENV_PATH`` is 0 (jupyter_core). Learners have no user config of their
own for these views, so for them the environment's setting holds.

A learner who turned the views on for themselves would find no course to grade: the course folder and
its gradebook belong to the teacher (file permissions, on a hub that gives each user their own account).
``tests/hub/test_hub_grading.py`` runs a class through it on a real JupyterHub.

Usage: python tools/hub_grading.py image
       sudo python tools/hub_grading.py hub [--exchange DIR] [--course-id ID] [--config-dir DIR]
                                            [--jupyterhub-config-dir DIR]
       python tools/hub_grading.py teacher [--course DIR] [--exchange DIR] [--course-id ID]
       python tools/hub_grading.py new-secret [--secret-file FILE]
       python tools/hub_grading.py deadlines [--course DIR] [--course-id ID]
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

EXCHANGE = "/srv/nbgrader/exchange"
COURSE_ID = "attention"
#: the teacher's views: JupyterLab extensions, and the server extensions behind them
TEACHER_LAB = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
               "@jupyter/nbgrader:course-list")
TEACHER_SERVER = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")
#: every server's environment, so that the user's Jupyter config outranks the environment's (see above)
SERVER_ENV = {"JUPYTER_PREFER_ENV_PATH": "0"}
#: The Littlest JupyterHub's folder of extra hub config
TLJH_HUB_CONFIG = Path("/opt/tljh/config/jupyterhub_config.d")
#: what nbgrader's release checks the exchange folder for (0o777), with the sticky bit of /tmp
#: the teacher's file holding the course's secret (lessons_lib.exercises.grading.read_secret reads it)
SECRET_FILE = Path("~/.lessons-secret")
#: what autograding copies of a submission besides its notebook: nothing a learner could import instead
IGNORED = (".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py", "*.pth", "lessons_lib", "numpy",
           "IPython", "ipykernel")
EXCHANGE_MODE = stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO | stat.S_ISVTX
CONFIG = "nbgrader_config.py"
#: The Littlest JupyterHub's Unix account of hub user <name>, the name nbgrader gives their submissions
TLJH_PREFIX = "jupyter-"


def jupyter(*args: str, env: dict | None = None) -> None:
    """Run ``jupyter ARGS`` of this Python's environment; stop with its message when it fails."""
    command = [sys.executable, "-m", "jupyter", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"hub_grading: {' '.join(command[2:])} failed:\n{done.stdout}{done.stderr}")


def views_off_for_everyone() -> None:
    """The teacher's views off in this Python's environment (``--level=sys_prefix``), for every user."""
    for name in TEACHER_LAB:
        jupyter("labextension", "disable", "--level=sys_prefix", name)
        # JupyterLab 4.1+ locks what is disabled first in an environment ("migrating" to its plugin
        # manager), and a lock at this level keeps the user's level from turning it on: the teacher could
        # not. Unlocked, a learner could turn it on too, and would find no course to grade.
        jupyter("labextension", "unlock", "--level=sys_prefix", name)
    for name in TEACHER_SERVER:
        jupyter("server", "extension", "disable", "--sys-prefix", name)


def views_on_for_me() -> Path:
    """The teacher's views on at the user's level, for whoever runs this; return their config folder."""
    env = {**os.environ, **SERVER_ENV}
    for name in TEACHER_LAB:
        jupyter("labextension", "enable", "--level=user", name, env=env)
    # `jupyter server extension enable --user` refuses an extension that the user's own config does not
    # list yet (jupyter_server validates against that folder alone), so the file is written as it would:
    # jupyter_server merges every jupyter_server_config.d/*.json by key, the user's over the environment's.
    config = user_config_dir()
    folder = config / "jupyter_server_config.d"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader-teacher.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": dict.fromkeys(TEACHER_SERVER, True)}}, indent=2) + "\n")
    return config


def config_text(course_id: str, exchange: str, course: Path | None = None,
                secret_file: str | Path = SECRET_FILE) -> str:
    """An nbgrader_config.py: the course id and the exchange (and, for the teacher, the course folder, the
    course's judge and the file of its secret)."""
    lines = ["# Written by tools/hub_grading.py: the course and its exchange (docs/classroom.md).",
             "c = get_config()  # noqa: F821", f"c.CourseDirectory.course_id = {course_id!r}",
             f"c.Exchange.root = {exchange!r}"]
    if course is not None:
        lines += [f"c.CourseDirectory.root = {str(course)!r}",
                  "c.Execute.timeout = 300  # lesson 09 trains its model in the kernel",
                  "# The grade comes from the course's judge as well as the learner's kernel; the judge",
                  "# reads the secret of the unseen cases from a file only the teacher can read (a new one",
                  "# each term), and no learner's process ever holds it.",
                  "from lessons_lib.exercises.autograde import autograde_preprocessors",
                  "c.Autograde.autograde_preprocessors = autograde_preprocessors()",
                  f"c.JudgedExecute.secret_file = {str(secret_file)!r}",
                  "# Only a submission's notebook is graded: a module handed in beside it is not imported.",
                  f"c.CourseDirectory.ignore = {list(IGNORED)!r}"]
    return "\n".join(lines) + "\n"


#: the course's grading policy in the teacher's nbgrader config (lessons_lib/course/grading_policy.py)
POLICY = """\
# The course's grading policy (lessons_lib/course/grading_policy.py): a late submission loses this share of
# its score, in percent, for each day begun after its due date (0: no penalty), shown on its feedback page;
# feedback pages are light (no figures, no script, nothing from the internet). Due dates and extensions:
# deadlines.toml in the course folder, then `python tools/hub_grading.py deadlines`.
from lessons_lib.course import grading_policy
grading_policy.configure(c, percent_per_day={percent:g})  # noqa: F821
"""
#: where every learner has a Unix account of their own: collect keeps only the submissions they own
OWNED = """\
# Every learner has a Unix account of their own (The Littlest JupyterHub): collect keeps only a submission
# owned by the account it names (lessons_lib/course/grading_policy.py, OwnedCollect).
c.ExchangeFactory.collect = "lessons_lib.course.grading_policy.OwnedCollect"  # noqa: F821
"""
#: the file of due dates and extensions, in the course folder
DEADLINES = "deadlines.toml"
DEADLINES_TEMPLATE = """\
# Due dates and extensions (docs/classroom.md, "Deadlines, late work and extensions"). After each change:
#   python tools/hub_grading.py deadlines --course ~/course     then autograde as usual
timezone = "UTC"   # the zone of the times below: any IANA name, e.g. "Europe/Berlin", "America/Chicago"

[due]   # lesson (its notebook's name) = the date and time it is due
# "03_step2_scores" = 2026-12-08T09:00:00

[extensions]   # learner (as nbgrader names them: jupyter-<name> on TLJH) = days added to every due date,
               # or a table of lesson = days for some lessons only
# "jupyter-ada" = 3
# "jupyter-ben" = { "04_step3_scale_softmax" = 2 }
"""


def make_secret(path: Path) -> Path:
    """The course's secret for the unseen cases, readable by its owner only: made when the file is missing,
    empty, blank or too short to be a secret (nothing was ever graded with it: grading refuses such a file),
    kept otherwise (a term's secret never changes behind the teacher's back)."""
    from lessons_lib.exercises.grading import SECRET_LENGTH

    try:
        kept = path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        kept = ""
    if len(kept) < SECRET_LENGTH:
        path.write_text(secrets.token_hex(16) + "\n", encoding="utf-8")
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    return path


def new_secret(path: Path, now: datetime.datetime | None = None) -> tuple[Path, Path | None]:
    """A fresh secret in ``path`` (readable by its owner only), the old one, if any, moved aside to
    ``path.old-<UTC date and time>`` (kept: grades given with it can be checked again); return both."""
    now = now or datetime.datetime.now(datetime.UTC)
    old = None
    if path.exists():
        old = path.with_name(f"{path.name}.old-{now:%Y%m%dT%H%M%S}")
        path.rename(old)
        os.chmod(old, stat.S_IRUSR | stat.S_IWUSR)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(secrets.token_hex(16) + "\n")
    return path, old


def make_exchange(exchange: Path) -> None:
    """The exchange folder, writable by every user, sticky (created, or its mode set, as needed)."""
    exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(exchange, EXCHANGE_MODE)


def hub_config_text() -> str:
    """The hub's config that gives every server :data:`SERVER_ENV` (a jupyterhub_config.py snippet)."""
    return ("# Written by tools/hub_grading.py: each user's Jupyter config outranks the environment's,\n"
            "# so that the teacher can turn nbgrader's teacher views on for themselves (docs/classroom.md).\n"
            f"c.Spawner.environment.update({SERVER_ENV!r})  # noqa: F821\n")


def hub(exchange: Path, course_id: str, config_dir: Path, hub_config_dir: Path | None) -> list[Path]:
    """The admin's set-up: the teacher's views off for everyone, the exchange, every user's config, and
    (in ``hub_config_dir``, TLJH's ``jupyterhub_config.d``) the servers' environment."""
    views_off_for_everyone()
    make_exchange(exchange)
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / CONFIG).write_text(config_text(course_id, str(exchange)), encoding="utf-8")
    made = [exchange, config_dir / CONFIG]
    if hub_config_dir is not None:
        hub_config_dir.mkdir(parents=True, exist_ok=True)
        (hub_config_dir / "nbgrader.py").write_text(hub_config_text(), encoding="utf-8")
        made.append(hub_config_dir / "nbgrader.py")
    return made


def user_config_dir() -> Path:
    """Where ``jupyter ... --user`` writes for whoever runs this (``jupyter --config-dir``)."""
    done = subprocess.run([sys.executable, "-m", "jupyter", "--config-dir"], capture_output=True, text=True,
                          check=True)
    return Path(done.stdout.strip())


def teacher(course: Path, course_id: str, exchange: str, percent_per_day: float = 10,
            per_learner_accounts: bool = False) -> list[Path]:
    """The teacher's set-up, run as the teacher: their views on, their course folder and config (with the
    course's grading policy, and where each learner has an account of their own, collect that keeps only a
    learner's own submissions: :data:`OWNED`), and the course's deadlines file to fill in."""
    config = views_on_for_me()
    (course / "source").mkdir(parents=True, exist_ok=True)
    os.chmod(course, stat.S_IRWXU)  # the course (sources, submissions, gradebook) is the teacher's alone
    secret = make_secret(SECRET_FILE.expanduser())
    (config / CONFIG).write_text(config_text(course_id, exchange, course.resolve())
                                 + POLICY.format(percent=percent_per_day)
                                 + (OWNED if per_learner_accounts else ""), encoding="utf-8")
    deadlines = course / DEADLINES
    if not deadlines.exists():
        deadlines.write_text(DEADLINES_TEMPLATE, encoding="utf-8")
    return [course, config / CONFIG, secret, deadlines]


class DeadlineError(ValueError):
    """A deadlines file that cannot be applied as written; the message names the entry and the fix."""


def _lessons() -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from conventions import LESSONS

    return [lesson.slug for lesson in LESSONS.values()]


def _known_lesson(name: str, where: str) -> str:
    import difflib

    lessons = _lessons()
    if name not in lessons:
        close = difflib.get_close_matches(name, lessons, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"the lessons: {', '.join(lessons)}"
        raise DeadlineError(f"{where}: no lesson called {name!r}; {hint}")
    return name


#: the longest extension the file takes: a term
MAX_DAYS = 365


def _days(value, where: str) -> datetime.timedelta:
    import math

    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not 0 < value <= MAX_DAYS):
        raise DeadlineError(f"{where}: an extension is a number of days above 0 and at most {MAX_DAYS} "
                            f"(1.5 is a day and a half); got {value!r}")
    return datetime.timedelta(days=value)


def _table(data: dict, key: str, path: Path, example: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise DeadlineError(f"{path}, {key}: a table, such as [{key}] then {example} on the next line; got "
                            f"{key} = {value!r}")
    return value


Extensions = dict[str, dict[str, datetime.timedelta]]


def read_deadlines(path: Path) -> tuple[dict[str, datetime.datetime], Extensions]:
    """The due dates (lesson -> UTC, naive, as nbgrader keeps them) and the extensions (learner -> lesson or
    ``"*"`` for every lesson -> extra time) of a deadlines file (:data:`DEADLINES_TEMPLATE`)."""
    import tomllib
    import zoneinfo

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DeadlineError(f"{path} cannot be read: {exc}") from None
    unknown = sorted(set(data) - {"timezone", "due", "extensions"})
    if unknown:
        raise DeadlineError(f"{path}: {', '.join(unknown)} is not part of a deadlines file; it holds "
                            "timezone, [due] and [extensions]")
    try:
        zone = zoneinfo.ZoneInfo(data.get("timezone", "UTC"))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError):
        raise DeadlineError(f"{path}: timezone {data.get('timezone')!r} is not a time zone's name (such as "
                            "\"Europe/Berlin\")") from None
    due = {}
    for lesson, when in _table(data, "due", path, '"03_step2_scores" = 2026-12-08T09:00:00').items():
        where = f"{path}, due {lesson!r}"
        _known_lesson(lesson, where)
        if not isinstance(when, datetime.datetime):
            raise DeadlineError(f"{where}: give a date and a time, such as 2026-12-08T09:00:00; got {when!r}")
        when = when if when.tzinfo else when.replace(tzinfo=zone)
        due[lesson] = when.astimezone(datetime.UTC).replace(tzinfo=None)
    extensions: Extensions = {}
    for learner, value in _table(data, "extensions", path, '"jupyter-ada" = 3').items():
        where = f"{path}, extensions {learner!r}"
        if isinstance(value, dict):
            extensions[learner] = {_known_lesson(lesson, where): _days(days, f"{where}, {lesson!r}")
                                   for lesson, days in value.items()}
        else:
            extensions[learner] = {"*": _days(value, where)}
    return due, extensions


def quiet_gradebook():
    """A context in which nbgrader's gradebook warns the teacher of nothing: its own calls make SQLAlchemy
    warn ("not in session, add operation ... will not proceed") about objects it adds a moment later,
    which says nothing about the course (nbgrader/api.py)."""
    import contextlib
    import warnings

    from sqlalchemy.exc import SAWarning

    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore", SAWarning)
    return stack


def apply_deadlines(course: Path, course_id: str = "attention") -> list[str]:
    """Write ``course/deadlines.toml`` into the course's gradebook (see ``deadlines`` above); return what
    it set, a line each."""
    from nbgrader.api import Gradebook

    due, extensions = read_deadlines(course / DEADLINES)
    # a new gradebook asks `alembic` (nbgrader's migrations) for its version: the one beside this Python
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    lines = []
    with quiet_gradebook(), Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id) as gb:
        for lesson, when in sorted(due.items()):
            gb.update_or_create_assignment(lesson, duedate=when)
            lines.append(f"{lesson}: due {when:%Y-%m-%d %H:%M} UTC")
        known = {s.id for s in gb.students} | {p.name for p in (course / "submitted").glob("*") if p.is_dir()}
        wanted = {}
        for learner, lessons in extensions.items():
            student = learner
            if student not in known:  # jupyter-ada written as ada, or the other way round
                bare = student.removeprefix(TLJH_PREFIX)
                twin = bare if bare != student else TLJH_PREFIX + student
                student = twin if twin in known else student
            dated = {a.name for a in gb.assignments if a.duedate is not None}
            names = sorted(dated) if "*" in lessons else list(lessons)
            for lesson in names:
                if lesson not in dated:  # nbgrader adds an extension to the due date: none yet, so kept here
                    days = lessons[lesson].total_seconds() / 86400
                    lines.append(f"{student}: {days:g} more day(s) for {lesson} kept in the file, applied "
                                 "once it has a due date")
                    continue
                wanted[(lesson, student)] = lessons.get(lesson, lessons.get("*"))
        for (lesson, student), extra in sorted(wanted.items()):
            gb.update_or_create_assignment(lesson)
            gb.update_or_create_student(student)
            gb.update_or_create_submission(lesson, student)
            gb.grant_extension(lesson, student, minutes=extra.total_seconds() / 60)
            lines.append(f"{student}: {extra.total_seconds() / 86400:g} more day(s) for {lesson}")
        for assignment in gb.assignments:
            for submission in assignment.submissions:
                key = (assignment.name, submission.student.id)
                if submission.extension is not None and key not in wanted:
                    gb.grant_extension(*key)  # no time given: the extension is removed
                    lines.append(f"{key[1]}: extension for {key[0]} removed")
    return lines


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from conventions import ToolParser

    parser = ToolParser(prog="tools/hub_grading.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("image", help="turn the teacher's views off for everyone in this environment")
    fresh = sub.add_parser("new-secret", help="a fresh course secret, the old one kept aside")
    fresh.add_argument("--secret-file", type=Path, default=SECRET_FILE,
                       help=f"the file of the course's secret (default {SECRET_FILE})")
    for name in ("hub", "teacher", "deadlines"):
        part = sub.add_parser(name)
        part.add_argument("--course-id", default=COURSE_ID, help=f"the course id (default {COURSE_ID})")
        if name == "deadlines":
            part.add_argument("--course", type=Path, default=Path.home() / "course",
                              help=f"the teacher's course folder, holding {DEADLINES} (default ~/course)")
            continue
        part.add_argument("--exchange", default=EXCHANGE, help=f"the exchange folder (default {EXCHANGE})")
        if name == "teacher":
            part.add_argument("--per-learner-accounts", action="store_true",
                              help="every learner has a Unix account of their own (TLJH): collect keeps only "
                                   "the submissions each learner's account made")
        if name == "hub":
            part.add_argument("--config-dir", type=Path, default=Path(sys.prefix) / "etc" / "jupyter",
                              help="where every user's nbgrader config goes (default: this environment's)")
            part.add_argument("--jupyterhub-config-dir", type=Path,
                              default=TLJH_HUB_CONFIG if TLJH_HUB_CONFIG.is_dir() else None,
                              help=f"the hub's extra config folder (default {TLJH_HUB_CONFIG}, if there)")
        else:
            part.add_argument("--course", type=Path, default=Path.home() / "course",
                              help="the teacher's course folder (default ~/course)")
    args = parser.parse_args(argv)
    if args.command == "image":
        views_off_for_everyone()
        print("the teacher's views (formgrader, create assignment, course list) are off for everyone here")
        return 0
    if args.command == "new-secret":
        made, old = new_secret(args.secret_file.expanduser())
        kept = f" (the old one kept as {old}, readable by you only)" if old else ""
        print(f"a new secret in {made}{kept}. Every exercise's unseen cases change with it: submissions "
              "autograded from now on meet the new ones; those graded before keep their grades unless you "
              "autograde them again.")
        return 0
    if args.command == "deadlines":
        try:
            for line in apply_deadlines(args.course, args.course_id):
                print(line)
        except DeadlineError as exc:
            parser.exit(2, f"hub_grading: {exc}\n")
        return 0
    if args.command == "hub":
        made = hub(Path(args.exchange), args.course_id, args.config_dir, args.jupyterhub_config_dir)
        if args.jupyterhub_config_dir is None:
            print(f"no hub config folder: give every server the environment {SERVER_ENV} (Zero to "
                  "JupyterHub: singleuser.extraEnv), or the teacher's views stay off for the teacher too")
    else:
        made = teacher(args.course, args.course_id, args.exchange,
                       per_learner_accounts=args.per_learner_accounts)
    print(f"{args.command}: " + ", ".join(map(str, made)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
