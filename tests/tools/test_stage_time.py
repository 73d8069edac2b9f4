"""``make test`` ends with each stage's wall time and the CPU time spent while it ran (tools/stage_time.py):
how busy a stage kept the cores says whether waiting less, or computing less, would make it faster."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, load_tool

stage_time = load_tool("stage_time")
TOOL = REPO / "tools" / "stage_time.py"

# a grandchild of the stage's command that takes 1.2 s of CPU, however busy the machine
BUSY_GRANDCHILD = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
                   "'import time\\nwhile time.process_time() < 1.2: pass'], check=True)")


@pytest.mark.subprocess
def test_a_stage_row_holds_its_wall_time_and_the_cpu_time_spent_while_it_ran_a_grandchilds_too(tmp_path):
    record = tmp_path / "stage-times.txt"
    done = subprocess.run([sys.executable, str(TOOL), str(record), "busy", "--",
                           sys.executable, "-c", BUSY_GRANDCHILD], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    name, wall, cpu, *rest = record.read_text(encoding="utf-8").split()
    assert name == "busy" and rest == [], record.read_text(encoding="utf-8")
    assert int(cpu) >= 1 and int(wall) >= 1, (wall, cpu)


@pytest.mark.subprocess
def test_a_failed_stage_is_marked_and_its_exit_status_passed_on(tmp_path):
    record = tmp_path / "stage-times.txt"
    record.write_text("lint 3 5\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(TOOL), str(record), "test-hub", "--",
                           sys.executable, "-c", "raise SystemExit(3)"])
    assert done.returncode == 3
    assert record.read_text(encoding="utf-8").splitlines()[1].split()[::3] == ["test-hub", "failed"]


def test_the_cpu_time_is_the_machines_busy_time_from_proc_stat(tmp_path, monkeypatch):
    # user nice system idle iowait irq softirq steal guest guest_nice, in clock ticks
    (tmp_path / "stat").write_text("cpu  400 20 100 9000 300 8 12 50 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    monkeypatch.setattr(stage_time, "PROC_STAT", tmp_path / "stat")
    assert stage_time.cpu_seconds() == pytest.approx(540 / os.sysconf("SC_CLK_TCK"))


def test_without_proc_stat_the_cpu_time_is_that_of_the_waited_for_children(tmp_path, monkeypatch):
    import resource

    monkeypatch.setattr(stage_time, "PROC_STAT", tmp_path / "no-such-file")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert stage_time.cpu_seconds() == pytest.approx(usage.ru_utime + usage.ru_stime, abs=0.05)


def test_the_table_gives_each_stage_and_the_sum_with_how_busy_the_cores_were(tmp_path):
    record = tmp_path / "stage-times.txt"
    record.write_text("lint 100 180\ntest-hub 50 20 failed\n", encoding="utf-8")
    lines = stage_time.table(record, cores=2).splitlines()
    assert "2 cores" in lines[0]
    assert lines[2].split() == ["lint", "100", "180", "90", "%"]
    assert lines[3].split() == ["test-hub", "50", "20", "20", "%", "failed"]
    assert lines[4].split() == ["in", "all", "150", "200", "67", "%"]


def test_a_stage_without_its_command_is_refused_with_a_usage_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        stage_time.main([str(tmp_path / "stage-times.txt"), "lint"])
    assert exit_.value.code == 2 and "after --" in capsys.readouterr().err
