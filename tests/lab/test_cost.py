"""The cost module: counting scores and FLOPs, the memory guard, measuring, log-log slopes.

No timing is asserted here (timings belong to benchmarks/); memory measured by tracemalloc
is exact, so its slopes are.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from lessons_lib._checks import SizeLimitError
from lessons_lib.lab import cost
from tests.helpers import REPO


# ------------------------------------------------------------------ counting
def test_the_seed_numbers():
    assert cost.score_count(1_000) == 1_000_000
    assert cost.score_count(100_000) == 10_000_000_000
    assert cost.score_memory(100_000) == 40_000_000_000            # float32: 40 GB
    assert cost.score_memory(100_000, dtype="float64") == 80_000_000_000


def test_counts_scale_with_heads_batch_and_keys():
    assert cost.score_count(10, 30, n_heads=4, batch=2) == 2 * 4 * 10 * 30
    assert cost.score_memory(8, n_heads=2, dtype=np.float16) == 8 * 8 * 2 * 2


def test_flops_are_four_n_squared_d_per_head_halved_when_causal():
    assert cost.attention_flops(8192, 128) == 4 * 8192**2 * 128
    assert cost.attention_flops(8192, 128, n_heads=32, causal=True) == 2 * 8192**2 * 128 * 32
    assert cost.attention_flops(10, 4, n_keys=20, batch=3) == 4 * 10 * 20 * 4 * 3


@pytest.mark.parametrize("call,err,match", [
    (lambda: cost.score_count(0), ValueError, "at least 1"),
    (lambda: cost.score_count(2.5), TypeError, "whole number"),
    (lambda: cost.score_count(4, n_heads=0), ValueError, "n_heads"),
    (lambda: cost.attention_flops(4, 8, causal="yes"), TypeError, "causal must be True or False"),
    (lambda: cost.attention_flops(4, 0), ValueError, "d"),
    (lambda: cost.score_memory(4, dtype="int32"), TypeError, "floating-point"),
    (lambda: cost.score_memory(4, dtype="nonsense"), TypeError, "numpy float type"),
    (lambda: cost.estimate_memory("fast numpy", 4), ValueError, "method must be one of"),
])
def test_bad_arguments_are_explained(call, err, match):
    with pytest.raises(err, match=match):
        call()


# ------------------------------------------------------------------ the memory guard
def test_estimates_grow_like_n_squared_for_naive_and_like_n_for_tiled():
    naive = [cost.estimate_memory("naive numpy", n) for n in (4096, 8192)]
    tiled = [cost.estimate_memory("tiled numpy", n) for n in (4096, 8192)]
    assert naive[1] > 3.5 * naive[0] and tiled[1] < 2.1 * tiled[0]
    assert naive[1] >= 8192**2 * 4 > 8 * tiled[1]


def test_a_size_that_would_not_fit_is_refused_at_once(monkeypatch):
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "64")
    monkeypatch.setattr(cost, "measure_runs", lambda *a, **k: pytest.fail("measured before refusing"))
    with pytest.raises(SizeLimitError, match=r"naive numpy attention at N = 8,192.*'tiled numpy'"):
        cost.measure_scaling([256, 8192], methods=["naive numpy"], progress=False)
    with pytest.raises(SizeLimitError, match="'torch SDPA' \\(the fused kernel\\)"):
        cost.check_fits("torch SDPA math", 8192)
    assert cost.check_fits("tiled numpy", 8192) < 64 * 2**20      # the tiled method still fits


def test_the_default_limit_refuses_naive_at_100k_tokens():
    with pytest.raises(SizeLimitError, match="40.1 GB"):  # 4·N² bytes of scores plus a little
        cost.check_fits("naive numpy", 100_000)


# ------------------------------------------------------------------ measuring
def test_measure_reports_time_and_memory_of_numpy_methods():
    m = cost.measure("naive numpy", 512, 16, repeats=1)
    assert (m.method, m.n, m.d, m.dtype, m.kernel, m.memory_source) == (
        "naive numpy", 512, 16, "float32", "", "tracemalloc")
    assert m.seconds > 0 and m.input_bytes == 3 * 512 * 16 * 4
    assert 512 * 512 * 4 <= m.peak_bytes <= cost.estimate_memory("naive numpy", 512, 16)
    assert m.total_bytes == m.peak_bytes + m.input_bytes


def test_measured_memory_slopes_naive_two_tiled_at_most_one():
    table = cost.measure_scaling([256, 512, 1024], methods=["naive numpy", "tiled numpy"], d=16,
                                 repeats=1, block_size=64, progress=False)
    assert 1.8 < table.slope("naive numpy", "memory") < 2.1
    assert table.slope("tiled numpy", "memory") < 1.1
    assert table.memory("tiled numpy")[-1] < table.memory("naive numpy")[-1] / 8


def test_torch_methods_report_their_kernel():
    pytest.importorskip("torch")
    table = cost.measure_scaling([128], methods=["torch SDPA", "torch SDPA math"], d=16, repeats=1,
                                 progress=False)
    assert [m.kernel for m in table.measurements] == ["flash", "math"]
    if sys.platform.startswith("linux"):
        math = table.measurements[1]
        assert math.memory_source == "resident set" and math.peak_bytes is not None


def test_default_methods_leave_torch_out_when_it_is_missing(monkeypatch):
    from lessons_lib.core import backends

    assert cost.default_methods() == ["naive numpy", "tiled numpy", "torch SDPA"]
    monkeypatch.setattr(backends, "torch_available", lambda: False)
    assert cost.default_methods() == ["naive numpy", "tiled numpy"]
    table = cost.measure_scaling([64], d=8, repeats=1, progress=False, memory=False)
    assert table.methods == ["naive numpy", "tiled numpy"]


def test_timing_runs_on_one_thread_and_restores_the_libraries(monkeypatch):
    torch = pytest.importorskip("torch")
    from threadpoolctl import threadpool_info

    seen = []
    real = cost.method_runner

    def spy_runner(method, block):
        fn = real(method, block)

        def run(q, k, v):
            seen.append(([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"],
                         torch.get_num_threads()))
            return fn(q, k, v)
        return run
    monkeypatch.setattr(cost, "method_runner", spy_runner)
    before = torch.get_num_threads()
    m = cost.measure("torch SDPA", 64, 8, repeats=2, memory=False)
    assert m.threads == 1 and torch.get_num_threads() == before
    timed = seen[1:]                                         # the first call is the warm-up
    assert timed and all(blas == [1] * len(blas) and t == 1 for blas, t in timed)
    seen.clear()
    assert cost.measure("naive numpy", 64, 8, repeats=1, memory=False, threads=None).threads is None


def test_progress_bar_is_shown(capsys):
    cost.measure_scaling([64, 128], methods=["tiled numpy"], d=8, repeats=1, memory=False)
    assert "2/2" in capsys.readouterr().err


@pytest.mark.subprocess
def test_import_cost_does_not_import_torch(fresh_imports):
    assert "torch" not in fresh_imports["import lessons_lib.lab.cost"]


# ------------------------------------------------------------------ slopes and tables
def test_loglog_slope_of_power_laws():
    n = np.array([256, 512, 1024, 4096])
    assert cost.loglog_slope(n, 3e-9 * n**2.0) == pytest.approx(2.0)
    assert cost.loglog_slope(n, 7 * n) == pytest.approx(1.0)


@pytest.mark.parametrize("x,y,match", [([1, 2], [1], "same length"), ([4], [2], "two different"),
                                       ([4, 4], [1, 2], "two different"), ([1, 2], [0, 1], "positive")])
def test_loglog_slope_explains_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        cost.loglog_slope(x, y)


def measurements_verdict(ratio):
    from lessons_lib.lab.measurements import time_ratio_verdict

    return time_ratio_verdict(ratio)


def _fake(method, n, seconds, peak):
    return cost.Measurement(method, n, 64, "float32", seconds, peak, 3 * n * 64 * 4, "tracemalloc")


def test_cost_table_slopes_ratios_and_text():
    table = cost.CostTable([_fake(m, n, f * n**2, None if m == "torch SDPA" else n**p)
                            for n in (100, 1000) for m, f, p in (("naive numpy", 1e-9, 2),
                                                                 ("tiled numpy", 2e-9, 1),
                                                                 ("torch SDPA", 5e-10, 1))])
    assert table.methods == ["naive numpy", "tiled numpy", "torch SDPA"]
    assert table.slope("naive numpy") == pytest.approx(2)
    assert table.slope("tiled numpy", "memory") == pytest.approx(1)
    assert table.slope("naive numpy", "memory", min_n=100) == pytest.approx(2)
    ratios = {(r["method"], r["N"]): r["× naive"] for r in table.rows()}
    assert ratios[("tiled numpy", 1000)] == pytest.approx(2)
    assert ratios[("torch SDPA", 100)] == pytest.approx(0.5)
    text = str(table)
    assert "× naive" in text and "–" in text                      # torch memory not measured: a dash
    with pytest.raises(ValueError, match="two different"):
        table.slope("torch SDPA", "memory")                         # no memory values to fit
    with pytest.raises(ValueError, match="No measurements of 'torch SDPA math'"):
        table.seconds("torch SDPA math")
    with pytest.raises(ValueError, match="'time' or 'memory'"):
        table.slope("naive numpy", "speed")


def test_the_verdict_of_a_run_says_its_ratio_and_which_way_it_went():
    from lessons_lib.lab import measurements

    assert measurements.time_ratio_verdict(1.25) == "1.25× the naive time: slower"
    assert measurements.time_ratio_verdict(0.5, "torch's time") == "0.50× torch's time: faster"
    assert measurements.time_ratio_verdict(0.95).endswith("about as fast")      # within the noise of one run
    assert "close to 2" in measurements.slope_verdict(1.93) and "below 2" in measurements.slope_verdict(1.54)
    assert "above 2" in measurements.slope_verdict(2.54)
    for bad in (0, -1.0, float("nan"), "1.2"):
        with pytest.raises(ValueError, match="ratio must be a positive number"):
            measurements.time_ratio_verdict(bad)
    with pytest.raises(ValueError, match="slope must be a finite number"):
        measurements.slope_verdict(float("inf"))


def test_a_cost_table_prints_the_verdicts_of_its_own_run():
    table = cost.CostTable([_fake(m, n, f * n**p, n**q) for n in (100, 1000)
                            for m, f, p, q in (("naive numpy", 1e-9, 2, 2), ("tiled numpy", 3e-9, 2, 1),
                                               ("torch SDPA", 5e-8, 1.5, 1))])
    lines = table.slope_verdicts().splitlines()
    assert lines[0] == "naive numpy   time   ∝ N^2.00: close to 2, the N² work dominates"
    assert lines[1].strip() == "memory ∝ N^2.00" and "N^1.50: below 2" in lines[4]
    assert table.fastest_verdict() == ("At N = 1,000 on this run: torch SDPA 1.58× the naive time: slower; "
                                       "tiled numpy 3.00× the naive time: slower.")
    assert table.fastest_verdict(100).startswith("At N = 100 on this run: tiled numpy 3.00×")  # fastest first
    with pytest.raises(ValueError, match="N = 500 needs naive numpy"):
        table.fastest_verdict(500)


def test_block_size_trade_off_memory_grows_with_the_block():
    result = cost.measure_block_sizes(512, (16, 64, 256), d=8, repeats=1, progress=False)
    assert list(result.block_sizes) == [16, 64, 256]
    assert result.naive.method == "naive numpy" and result.naive.block_size is None
    peaks = [m.peak_bytes for m in result.tiled]
    assert peaks[0] < peaks[1] < peaks[2] < result.naive.peak_bytes      # a tile is block² scores
    assert (result.memory_ratios < 1).all() and result.time_ratios.shape == (3,)
    ratio = result.time_ratios[2]
    assert result.verdict(256) == (f"On this run, at N = 512, the tiled version with block 256 took "
                                   f"{measurements_verdict(ratio)}.")
    with pytest.raises(ValueError, match="block 1024 was not measured"):
        result.verdict()
    assert "block" in str(result) and "× naive" in str(result)
    with pytest.raises(ValueError, match="at least 1"):
        cost.measure_block_sizes(64, (0,), progress=False)


# ------------------------------------------------------------------ the GPU benchmark, benchmarks/gpu_sdpa.py


def _gpu_script():
    spec = importlib.util.spec_from_file_location("gpu_sdpa", REPO / "benchmarks" / "gpu_sdpa.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.subprocess
def test_gpu_benchmark_exits_cleanly_without_cuda():
    if _cuda():
        pytest.skip("this machine has CUDA: the benchmark would really run")
    out = subprocess.run([sys.executable, "benchmarks/gpu_sdpa.py"], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "nothing measured" in out.stdout


def test_gpu_benchmark_tables_count_four_n_squared_d_and_show_what_was_skipped():
    gpu_sdpa = _gpu_script()

    assert gpu_sdpa.attention_flops(8192, 128, False) == 4 * 8192**2 * 128 * 32
    assert gpu_sdpa.attention_flops(8192, 128, True) == 2 * 8192**2 * 128 * 32
    row = {"n": 32768, "d": 128, "causal": False, "flops": 1.0, "kernel": "flash", "ours_s": 0.05,
           "ours_tflops": 450.0, "ours_peak_bytes": 2**30, "naive_skipped": "needs about 200 GB"}
    assert "skipped: needs about 200 GB" in gpu_sdpa.format_row(row)
    info = {"gpu": "Test GPU", "torch": "x", "cuda": "y", "batch": 4, "heads": 8,
            "bf16_matmul_tflops": 900.0, "max_abs_error_vs_fp32_naive": 0.01, "rows": [row]}
    table = gpu_sdpa.markdown(info)
    assert "| 32768 | 128 | False | flash | 50.00 | 450 | 1024 | needs about 200 GB |" in table


@pytest.mark.gpu
def test_gpu_benchmark_runs_on_cuda(tmp_path):
    if not _cuda():
        pytest.skip("no CUDA GPU on this machine")
    gpu_sdpa = _gpu_script()

    gpu_sdpa.main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "gpu_sdpa.md").read_text().count("\n| ") >= 8
