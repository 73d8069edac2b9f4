"""The check's side of a forked child (:mod:`.child`): start it, read what it sends under a time limit, and
stop it and everything it started.

* a function that does not finish in time is **killed**, and so is every process it started, in its
  process group or out of it (a new session, a double fork: on Linux the child is their "subreaper" and
  the check stops each of them, :func:`_stop_left`), so nothing of it keeps a core busy after the check
  returns; a function that returns but leaves a process running is told so, and the process stopped;
* **time is the child's own**: what counts against the time limit is the time since the fork less the
  time the child waited for a processor (Linux: its run delay), so a correct function on a busy classroom
  server is not "late" because others kept the processors (:class:`_ChildClock`);
* a child killed by the system (the out-of-memory killer of a server) is said as memory, any other end
  before it reported as what it was (a crash, ``os._exit``).
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable

from . import wire
from .child import serve
from .outcome import Ran
from .watch import Watch

__all__ = ["call_in_child"]


def call_in_child(fn: Callable, args: tuple, time_limit: float, watch: Watch | None) -> Ran:
    """Run the call in a forked child that reports through a pipe; stop it (and everything it started)
    when its own time passes ``time_limit`` seconds, when it has reported, or when the learner presses
    the stop button."""
    items = wire.answer_items(args)
    read_end, write_end = os.pipe()
    hold_read, hold_write = os.pipe()  # the child waits on it once it has reported: see _stop_left
    oom_kills = _oom_kills()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        try:
            os.close(read_end)
            os.close(hold_write)
            serve(fn, args, watch, write_end, items)
            os.read(hold_read, 1)  # alive, as the subreaper of what the call started, until it is stopped
        finally:
            os._exit(0)
    os.close(write_end)
    os.close(hold_read)
    try:
        os.setpgid(pid, pid)  # its own process group (the child does the same: no race)
    except OSError:
        pass
    report = wire.Reader(read_end, wire.MAX_REPORT + 128 * items)  # the answer and the inputs besides
    clock = _ChildClock(pid)
    left: tuple[str, ...] = ()
    try:
        while not report.done:
            remaining = time_limit - clock.elapsed()
            if select.select([read_end], [], [], min(max(remaining, 0.0), _LOOK_S))[0]:
                report.read()  # what came while this process itself waited for a processor counts too
            elif remaining <= 0:
                break
    finally:  # KeyboardInterrupt (the stop button) included
        os.close(read_end)
        ended = report.complete is False and _ended(pid, grace=1.0)  # its pipe closed: did it end?
        left = () if ended else _stop_left(pid)
        os.close(hold_write)
        status = _end(pid)
    if not report.done:
        return Ran(timed_out=True)
    return _received(report, status, _oom_kills() > oom_kills, left if report.data else ())


def _received(report: wire.Reader, status: int, oom_killed: bool, left: tuple[str, ...]) -> Ran:
    """What the child's report says, or why there is none (it exited, crashed or was killed)."""
    if not report.data:
        if report.complete is False and _killed_by_system(status):
            return Ran(error=MemoryError(_memory_words(oom_killed)))
        return Ran(error=SystemExit(_exit_words(status)))
    try:
        sent = wire.load(report.data)
    except Exception as exc:  # nothing the child sent may break the check
        sent = {"broken": f"its answer could not be read back ({type(exc).__name__})"}
    if not isinstance(sent, dict) or "broken" in sent:
        why = sent.get("broken") if isinstance(sent, dict) else None
        return Ran(error=SystemExit(why or _exit_words(status)))
    if sent.get("output"):
        print(sent["output"], end="" if sent["output"].endswith("\n") else "\n")
    error = wire.rebuild_error(sent["error"]) if sent.get("error") else None
    borrowed = [*report.hits, *(name for name in sent.get("borrowed", ()) if name not in report.hits)]
    args = tuple(wire.unpack(a) for a in sent["args"])
    return Ran(wire.unpack(sent["result"]), error, sent.get("line", ""), args,
               borrowed=tuple(borrowed), tampered=tuple(sent.get("tampered", ())),
               too_deep=bool(sent.get("too_deep")), left_running=left,
               broken=str(sent.get("broken_watch", "")))


class _ChildClock:
    """The seconds a child has used of its time limit: its time on a processor, and the time it was not
    runnable (asleep in ``time.sleep``, blocked on a pipe or a lock, stopped), but never the time it was
    ready to run and waited for a processor. On a busy classroom server a correct function waits behind
    others, for seconds at times; that wait is not its doing. (Linux's run delay in ``/proc/PID/schedstat``
    is added only when a wait ends, so the clock reads the child's time on a processor there and its state
    in ``/proc/PID/stat`` each time it is asked: an interval over which the child was not runnable counts
    whole, any other only for its processor time.) Without ``/proc`` (macOS) it is the wall time since the
    fork."""

    def __init__(self, pid: int):
        self.pid, self.start = pid, time.monotonic()
        self.last, self.used, self.on_cpu, self.waiting = self.start, 0.0, 0.0, False
        self.proc = os.path.exists(f"/proc/{pid}/schedstat")

    def _sample(self) -> tuple[float, bool] | None:
        """(seconds on a processor, whether it is runnable now), or None once it is gone."""
        try:
            with open(f"/proc/{self.pid}/schedstat", "rb") as stats:
                on_cpu = int(stats.read().split()[0]) / 1e9
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                state = stat.read().rpartition(b") ")[2][:1]
        except (OSError, ValueError, IndexError):
            return None
        return on_cpu, state == b"R"

    def elapsed(self) -> float:
        now = time.monotonic()
        sample = self._sample() if self.proc else None
        if sample is None:
            return now - self.start
        on_cpu, runnable = sample
        if self.waiting and not runnable:  # not runnable from the last look to this one: its own time
            self.used += max(now - self.last, on_cpu - self.on_cpu)
        else:
            self.used += max(0.0, on_cpu - self.on_cpu)
        self.last, self.on_cpu, self.waiting = now, on_cpu, not runnable
        return self.used


#: How often a check looks at a child that has not reported yet (its clock counts sleep by looking).
_LOOK_S = 0.05


def _process(pid: int) -> tuple[int, str, str, int] | None:
    """(pid, state, name, parent pid) of a process, from ``/proc/PID/stat``; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("utf-8", "replace")
    except OSError:
        return None
    name, _, rest = text.partition(" (")[2].rpartition(") ")
    fields = rest.split()
    if len(fields) < 2 or not fields[1].isdigit():
        return None
    return pid, fields[0], name, int(fields[1])


def _children(pid: int, everyone: list[tuple[int, str, str, int]] | None) -> list[tuple[int, str, str, int]]:
    """The children of ``pid``: from its threads' ``children`` files (Linux with CONFIG_PROC_CHILDREN), or
    from ``everyone`` (every process's stat) where the system has no such files."""
    if everyone is not None:
        return [p for p in everyone if p[3] == pid]
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as children:
            found += [info for child in children.read().split() if (info := _process(int(child)))]
    return found


def _descendants(pid: int) -> list[tuple[int, str, str, int]]:
    """The processes below ``pid`` (its children, theirs, ...), as (pid, state, name, parent pid)."""
    everyone = None
    if not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        try:
            everyone = [info for entry in os.listdir("/proc")
                        if entry.isdigit() and (info := _process(int(entry)))]
        except OSError:
            return []
    out, todo = [], [pid]
    while todo:
        try:
            below = _children(todo.pop(), everyone)
        except OSError:
            continue
        out += below
        todo += [child[0] for child in below]
    return out


def _stop_left(pid: int) -> tuple[str, ...]:
    """Stop the child and every process below it, and return the names of those that were still running
    (not merely finished and not yet reaped). The child is frozen first, so that nothing forks meanwhile;
    while it lives, an orphan of the call comes back to it (its subreaper), so a process in a new session
    or group, or a double fork, is found too. Each round freezes what it finds, then kills it, until two
    rounds in a row find nothing: a process that ends while a round reads ``/proc`` hands its children to
    the child after the round read the child's, so only the next round sees them. Without ``/proc``
    (macOS) the child's process group is all there is to stop (:func:`_end`)."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        pass
    running: list[str] = []
    empty = 0
    for _ in range(20):
        found = [p for p in _descendants(pid) if p[1] not in "ZX"]
        running = running or [name for _, _, name, _ in found]
        empty = 0 if found else empty + 1
        if empty == 2:
            break
        for signal_number in (signal.SIGSTOP, signal.SIGKILL):
            for child, *_ in found:
                try:
                    os.kill(child, signal_number)
                except OSError:
                    pass
    return tuple(sorted(set(running)))


def _ended(pid: int, grace: float) -> bool:
    """Whether the child ends of its own accord within ``grace`` seconds (it is not reaped: its status
    still says how it ended)."""
    deadline = time.monotonic() + grace
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except (ChildProcessError, OSError, AttributeError):  # no waitid (some systems): do not wait
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _end(pid: int) -> int:
    """Kill the child's process group (whatever it started too) and reap the child; its wait status."""
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError, OSError):
            pass
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _exit_words(status: int) -> str:
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        return f"it crashed the Python process that ran it (signal {os.WTERMSIG(status)})"
    return "it ended the Python process that ran it (os._exit, or a crash) before returning"


# --------------------------------------------------------------------------- memory
def _killed_by_system(status: int) -> bool:
    """The child died of SIGKILL before it reported, and the check had not killed it yet: on Linux the
    out-of-memory killer sends exactly that."""
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _memory_words(oom_killed: bool) -> str:
    if oom_killed:
        return "the system's out-of-memory killer stopped it, as it used more memory than this server allows"
    return ("the system stopped it before it returned (signal 9, which is how a server's out-of-memory "
            "killer stops a process that uses more memory than allowed)")


def _oom_kills() -> int:
    """How many processes the out-of-memory killer has stopped in this process's memory cgroup (Linux,
    cgroup v2 ``memory.events`` or v1 ``memory.oom_control``); 0 where the system does not say."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as groups:
            lines = groups.read().splitlines()
    except OSError:
        return 0
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for folder, name in ((f"/sys/fs/cgroup{path}", "memory.events"),
                             (f"/sys/fs/cgroup/memory{path}", "memory.oom_control")):
            if (controllers == "" and name == "memory.events") or "memory" in controllers.split(","):
                try:
                    with open(os.path.join(folder, name), encoding="utf-8") as events:
                        for row in events:
                            key, _, value = row.partition(" ")
                            if key == "oom_kill":
                                return int(value)
                except (OSError, ValueError):
                    continue
    return 0

