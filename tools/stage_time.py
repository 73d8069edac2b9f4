"""Each stage of ``make test``: its wall time, and the CPU time spent while it ran.

    python tools/stage_time.py build/stage-times.txt STAGE -- COMMAND ...   # run it, add its row
    python tools/stage_time.py build/stage-times.txt                       # print the table

The Makefile's ``test`` target runs every stage through the first form and prints the table with the
second. Run with only the standard library (``make test`` calls it before the venv exists).

*CPU s* is the CPU time the machine spent busy while the stage ran (``/proc/stat``: user, nice, system,
irq and softirq time of every core), which on a machine that does nothing else is the stage's. Where there is
no ``/proc/stat`` (macOS, Windows) it is the user and system time of the processes the stage started and
waited for (``getrusage(RUSAGE_CHILDREN)``), a lower bound: a browser or a server's child that ends on its
own is not counted. *Cores busy* is CPU s over wall s times the machine's cores. Near 100 %, the stage kept
every core busy: only less work, or more cores, makes it faster, and waiting less inside a test does not;
well below, it waited (a timer, a server's start, one process at a time), and those waits are what to look
at.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")


def cpu_seconds() -> float:
    """Seconds of CPU the machine has spent busy since it started (``/proc/stat``'s first line: user, nice,
    system, irq and softirq), or, without ``/proc/stat``, those of every child this process has waited
    for (and theirs)."""
    try:
        jiffies = [int(n) for n in PROC_STAT.read_text(encoding="ascii").split("\n", 1)[0].split()[1:8]]
    except (OSError, ValueError):
        import resource  # not on Windows, which has no /proc/stat either

        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime
    user, nice, system, _idle, _iowait, irq, softirq = jiffies
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def run_stage(record: Path, stage: str, command: list[str]) -> int:
    """Run ``command``, add ``<stage> <wall s> <CPU s> [failed]`` to ``record``; its exit status."""
    cpu, start = cpu_seconds(), time.monotonic()
    status = subprocess.call(command)
    wall, cpu = time.monotonic() - start, cpu_seconds() - cpu
    with record.open("a", encoding="utf-8") as rows:
        rows.write(f"{stage} {wall:.0f} {cpu:.0f}{' failed' if status else ''}\n")
    return status


def table(record: Path, cores: int | None = None) -> str:
    """The rows of ``record`` as a table, with their sum."""
    cores = cores or os.cpu_count() or 1
    lines = [f"== make test: each stage's wall time, and the CPU time spent while it ran ({cores} cores)",
             f"  {'stage':<16} {'wall s':>7} {'CPU s':>7} {'cores busy':>11}"]
    walls = cpus = 0

    def row(name: str, wall: int, cpu: int, note: str = "") -> str:
        busy = f"{100 * cpu / (wall * cores):.0f} %" if wall else "-"
        return f"  {name:<16} {wall:>7} {cpu:>7} {busy:>11} {note}".rstrip()

    for line in record.read_text(encoding="utf-8").splitlines():
        name, wall, cpu, *note = line.split()
        walls, cpus = walls + int(wall), cpus + int(cpu)
        lines.append(row(name, int(wall), int(cpu), " ".join(note)))
    lines.append(row("in all", walls, cpus))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", type=Path, help="the file of rows, one per stage")
    parser.add_argument("stage", nargs="?", help="the stage's name; then -- and the command that runs it")
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.stage is None:
        print("\n" + table(args.record))
        return 0
    if not command:
        parser.error("give the stage's command after --")
    return run_stage(args.record, args.stage, command)


if __name__ == "__main__":
    sys.exit(main())
