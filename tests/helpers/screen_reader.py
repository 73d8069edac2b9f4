"""A real screen reader: Orca (Debian's ``orca``) on a virtual X display, reading Debian's Chromium.

What the screen-reader test (``tests/browser/test_screen_reader.py``) and the transcript tool
(``tools/screen_reader_transcript.py``, ``make transcripts``) share:

- :func:`desktop` starts, each of its own: Xvfb (a display of its own, ``-displayfd``), a D-Bus session bus,
  the AT-SPI accessibility bus (``at-spi-bus-launcher``: what Orca reads) and Orca with ``--debug-file``
  and its reading of a page on load turned off (see ``ORCA_CUSTOMIZATIONS``); it yields a :class:`Desktop`
  and ends them all, last started first.
- :meth:`Desktop.chromium` starts Chromium on that display, *not* headless (a headless Chromium has no
  AT-SPI bridge), with ``--force-renderer-accessibility`` and a DevTools port; playwright drives it over CDP
  (opening lessons, Run All), while keys that a learner presses come from the X server (``xdotool``), so Orca
  hears them as it hears a keyboard.
- :class:`Speech` reads what Orca spoke: each ``SPEECH OUTPUT:`` line of its debug file. Orca writes that
  line whether or not a synthesiser is connected (none is here: speech-dispatcher has nothing to speak
  through on a machine without sound), so the text is Orca's own, as it would reach the synthesiser.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pty
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.browser import CHROMIUM, VIEWPORT

PROGRAMS = {
    "Xvfb": "xvfb",
    "dbus-daemon": "dbus",
    "orca": "orca",
    "xdotool": "xdotool",
    "gsettings": "libglib2.0-bin",
    "speech-dispatcher": "speech-dispatcher",
}
AT_SPI_LAUNCHER = Path("/usr/libexec/at-spi-bus-launcher")
START_S = 90
SPEECH_LINE = re.compile(r"SPEECH OUTPUT: (['\"])(.*)\1(\{.*\})?$")


def _die_with_parent() -> None:
    """In a started program, before it runs: end it (SIGTERM) when the process that started it ends, even
    killed (a test run stopped by a timeout leaves no X server or screen reader behind)."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


PR_SET_PDEATHSIG = 1


def missing() -> list[str]:
    """The Debian packages this machine lacks for a screen-reader run (empty when it has them all)."""
    lack = [package for program, package in PROGRAMS.items() if shutil.which(program) is None]
    if not AT_SPI_LAUNCHER.exists():
        lack.append("at-spi2-core")
    if not CHROMIUM.exists():
        lack.append("chromium")
    return lack


def _wait(check: Callable[[], object], timeout_s: float, what: str):
    """Poll ``check`` until it returns something true (every 50 ms); fail after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise TimeoutError(f"screen reader: {what} (after {timeout_s:g} s)")
        time.sleep(0.05)


@dataclass
class Speech:
    """What Orca spoke: the ``SPEECH OUTPUT:`` lines of its debug file, one utterance each."""

    path: Path

    def utterances(self) -> list[str]:
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8", errors="replace")
        return [m.group(2) for m in map(SPEECH_LINE.search, text.splitlines()) if m]

    def tail(self, chars: int = 6000) -> str:
        """The end of Orca's debug output (what it was doing when a wait ran out)."""
        if not self.path.exists():
            return "(no output)"
        with open(self.path, "rb") as file:
            file.seek(max(0, file.seek(0, os.SEEK_END) - chars))
            return file.read().decode("utf-8", errors="replace")

    def mark(self) -> int:
        """Where the speech stands now: :meth:`since` returns what comes after it."""
        return len(self.utterances())

    def since(self, mark: int) -> list[str]:
        return self.utterances()[mark:]

    def wait_idle(self, quiet_s: float = 2.0, timeout_s: float = 180) -> None:
        """Wait until Orca has worked through what the page sent it: its debug output stands still for
        ``quiet_s`` (after a Run All, a lesson's page sends it thousands of events; Orca reads them in turn,
        and a key pressed before it is done is answered only after them)."""
        size, still_since, end = -1, time.monotonic(), time.monotonic() + timeout_s
        while time.monotonic() - still_since < quiet_s:
            if time.monotonic() > end:
                raise TimeoutError(f"screen reader: Orca still busy after {timeout_s:g} s")
            time.sleep(0.2)
            now = self.path.stat().st_size if self.path.exists() else 0
            if now != size:
                size, still_since = now, time.monotonic()

    def wait_for(self, mark: int, wanted: Callable[[str], bool] | str, timeout_s: float = 60,
                 quiet_s: float = 1.0) -> list[str]:
        """What Orca said after ``mark``, once an utterance holds ``wanted`` (a text, or a test of the
        joined utterances) and Orca then said nothing more for ``quiet_s`` (it finished the sentence)."""
        test = (lambda said: wanted in said) if isinstance(wanted, str) else wanted
        try:
            _wait(lambda: test(" | ".join(self.since(mark))), timeout_s, "")
        except TimeoutError:
            raise TimeoutError(f"screen reader: Orca never said {wanted!r} in {timeout_s:g} s; it said "
                               f"{self.since(mark)!r}; the end of its debug output:\n{self.tail()}") from None
        count, still_since = len(self.since(mark)), time.monotonic()
        while time.monotonic() - still_since < quiet_s:
            time.sleep(0.1)
            now = len(self.since(mark))
            if now != count:
                count, still_since = now, time.monotonic()
        return self.since(mark)


@dataclass
class Desktop:
    """A virtual X display with a session bus, the AT-SPI bus and Orca running; :attr:`speech` is what
    Orca said."""

    env: dict
    workdir: Path
    speech: Speech
    processes: list = field(default_factory=list)

    def start(self, args: list[str], stderr_to: Path | None = None,
              stdout=subprocess.DEVNULL) -> subprocess.Popen:
        """Start a program on this desktop (in a session of its own, ended with the desktop); its errors go
        to ``stderr_to`` (a file, shown when the program fails to start) or nowhere."""
        err = open(stderr_to, "wb") if stderr_to else subprocess.DEVNULL
        proc = subprocess.Popen(args, env=self.env, stdout=stdout, stderr=err, start_new_session=True,
                                preexec_fn=_die_with_parent)
        if stderr_to:
            err.close()
        self.processes.append(proc)
        return proc

    def key(self, *keys: str) -> None:
        """Press keys on the X display (``xdotool key``: "Right", "Return", "space"), as a keyboard does."""
        subprocess.run(["xdotool", "key", "--delay", "150", *keys], env=self.env, check=True)

    @contextlib.contextmanager
    def chromium(self, playwright) -> Iterator:
        """Chromium on this display, not headless, its accessibility on, driven over CDP: yields
        playwright's browser context (its pages are windows Orca reads)."""
        profile = Path(tempfile.mkdtemp(prefix="chromium-", dir=self.workdir))
        w, h = VIEWPORT["width"], VIEWPORT["height"]
        proc = self.start([
            str(CHROMIUM), "--no-sandbox", "--no-first-run", "--disable-gpu", "--disable-quic",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--force-renderer-accessibility", "--remote-debugging-port=0", f"--user-data-dir={profile}",
            f"--window-size={w},{h}", "--window-position=0,0", "about:blank",
        ])
        port_file = profile / "DevToolsActivePort"
        port = _wait(lambda: port_file.exists() and port_file.read_text().split("\n")[0].strip(), START_S,
                     "Chromium did not open its DevTools port")
        browser = playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        try:
            yield browser.contexts[0]
        finally:
            with contextlib.suppress(Exception):
                browser.close()
            _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """End a process this module started, and its children (its own session), by its id."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _read_line(proc: subprocess.Popen, what: str) -> str:
    line = proc.stdout.readline().decode().strip()
    if not line:
        raise RuntimeError(f"screen reader: {what} did not start")
    return line


# speech-dispatcher with its dummy output module and no sound: Orca connects to it as to a synthesiser
# (left to spawn one itself, Orca waits on it for ever on a machine without sound).
SPEECHD_CONF = """\
CommunicationMethod "unix_socket"
SocketPath "default"
Timeout 0
LogLevel 3
LogDir "{log_dir}"
AudioOutputMethod "libao"
AddModule "dummy" "sd_dummy" ""
DefaultModule dummy
"""


def _speech_dispatcher(desk: Desktop) -> None:
    """Start speech-dispatcher (dummy module) on the desktop's runtime folder; wait for its socket."""
    conf = desk.workdir / "speechd"
    conf.mkdir()
    (conf / "speechd.conf").write_text(SPEECHD_CONF.format(log_dir=conf), encoding="utf-8")
    desk.start(["speech-dispatcher", "--run-single", "--timeout", "0", "--config-dir", str(conf)],
               stderr_to=conf / "stderr.log")
    socket = Path(desk.env["XDG_RUNTIME_DIR"]) / "speech-dispatcher" / "speechd.sock"
    _wait(socket.exists, START_S, f"speech-dispatcher did not open {socket}")


# Orca's settings for the run, loaded at its start (orca-customizations.py in its settings folder). Orca 43
# starts reading a web page aloud (Say All) when the page finishes loading. When JupyterLab's page is still
# empty at that moment (its splash screen just taken away), Orca's reader finds no text and ends without
# clearing its "in Say All" flag, so Orca stays "in Say All" for the rest of the session. In that state it
# never switches to focus mode, so a slider reached with Tab stays in browse mode and the arrow keys move
# Orca's reading cursor instead of the slider (seen in 2 of about 30 runs; the debug output says "Not using
# focus mode because we're in SayAll"). A learner turns this off in Orca's preferences for Chromium
# ("Automatically start speaking a page when it is first loaded"); the scenes do not need it, since each
# waits for Orca to fall quiet before its first key.
ORCA_CUSTOMIZATIONS = """\
import orca.settings
orca.settings.sayAllOnLoad = False
"""


def _orca(desk: Desktop) -> None:
    """Start Orca with its debug output on a pseudo-terminal (Orca never flushes its debug file; Python
    writes a file that is a terminal line by line), copied line by line into :attr:`Desktop.speech`'s file."""
    settings = Path(desk.env["HOME"]) / ".local" / "share" / "orca"
    settings.mkdir(parents=True)
    (settings / "orca-customizations.py").write_text(ORCA_CUSTOMIZATIONS, encoding="utf-8")
    master, slave = pty.openpty()
    try:
        desk.start(["orca", "--replace", "--debug-file=/dev/stdout"], stdout=slave,
                   stderr_to=desk.workdir / "orca.err")
    finally:
        os.close(slave)

    def copy() -> None:
        with open(desk.speech.path, "ab", buffering=0) as out:
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:   # Orca ended: the terminal is closed
                    break
                if not chunk:
                    break
                out.write(chunk.replace(b"\r\n", b"\n"))
        os.close(master)

    threading.Thread(target=copy, daemon=True, name="orca-debug").start()


@contextlib.contextmanager
def desktop() -> Iterator[Desktop]:
    """Xvfb, a D-Bus session bus, the AT-SPI bus and Orca, each started here and ended after (in a
    throw-away home, so no setting of this machine's user is read or written)."""
    workdir = Path(tempfile.mkdtemp(prefix="lessons-orca-"))
    runtime = workdir / "runtime"
    runtime.mkdir(mode=0o700)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DBUS_", "AT_SPI", "XDG_"))}
    env.update(HOME=str(workdir), XDG_RUNTIME_DIR=str(runtime), NO_AT_BRIDGE="0",
               GTK_MODULES="gail:atk-bridge")
    env.pop("DISPLAY", None)
    speech = Speech(workdir / "orca-debug.log")
    desk = Desktop(env, workdir, speech)
    try:
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten",
                                 "tcp"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_die_with_parent)
        desk.processes.append(xvfb)
        env["DISPLAY"] = f":{_read_line(xvfb, 'Xvfb')}"
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
                               preexec_fn=_die_with_parent)
        desk.processes.append(bus)
        env["DBUS_SESSION_BUS_ADDRESS"] = _read_line(bus, "the D-Bus session bus")
        subprocess.run(["gsettings", "set", "org.gnome.desktop.interface", "toolkit-accessibility", "true"],
                       env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        desk.start([str(AT_SPI_LAUNCHER), "--launch-immediately"])
        _speech_dispatcher(desk)
        _orca(desk)
        try:
            _wait(lambda: "Screen reader on." in speech.utterances(), START_S, "Orca did not start")
        except TimeoutError as err:
            log = speech.path.read_text(errors="replace")[-3000:] if speech.path.exists() else "(no output)"
            errors = (workdir / "orca.err").read_text(errors="replace")[-2000:]
            raise TimeoutError(f"{err}: {errors}\n{log}") from None
        yield desk
    finally:
        for proc in reversed(desk.processes):
            _stop(proc)
        shutil.rmtree(workdir, ignore_errors=True)
