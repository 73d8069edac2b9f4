"""Run a command on another numeric path of this machine, as if on another CPU (``make test-other-cpu``).

A committed output that carries roundoff digits (a float's last bits) matches only on the machine that
wrote it: an AVX-512 laptop, an Apple-silicon Mac or an ARM hub computes the same sums in another order
and prints other last digits. This tool runs a command with

* every optional SIMD feature that numpy found on this CPU switched off (``NPY_DISABLE_CPU_FEATURES``,
  the names ``numpy.show_runtime()`` lists as "found" beyond the baseline), so numpy's loops take their
  baseline code paths, and
* OpenBLAS on its generic core for this architecture (``OPENBLAS_CORETYPE``: Prescott on x86-64, ARMV8
  on 64-bit ARM), so matrix products add up in another order, without fused multiply-add, and
* torch on its baseline kernels (``ATEN_CPU_CAPABILITY=default`` instead of AVX2 or AVX-512, and oneDNN
  held to SSE4.1 on x86-64), so the lessons that train or run torch (07-09) take other code paths too,

so that ``make test`` can run the notebooks (nbval) and doctests a second time and prove that what they
print does not depend on the machine. It prints the path it chose, then runs the command:

    python tools/other_cpu.py pytest --nbval notebooks/
    python tools/other_cpu.py --show          # only print the settings
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys

GENERIC_CORE = {"x86_64": "Prescott", "amd64": "Prescott", "aarch64": "ARMV8", "arm64": "ARMV8"}
X86 = ("x86_64", "amd64")


def found_simd_features() -> list[str]:
    """The optional SIMD features numpy dispatches to on this CPU (beyond its compiled-in baseline)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]


def other_path_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) set for the other numeric path."""
    env = dict(os.environ if base is None else base)
    features = found_simd_features()
    if features:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(features)
    else:
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
    machine = platform.machine().lower()
    if machine in GENERIC_CORE:
        env["OPENBLAS_CORETYPE"] = GENERIC_CORE[machine]
    env["ATEN_CPU_CAPABILITY"] = "default"          # torch's kernels without AVX2/AVX-512 (or SVE)
    if machine in X86:
        env["ONEDNN_MAX_CPU_ISA"] = "SSE41"           # oneDNN (torch's convolutions, matmuls) likewise
    return env


def describe(env: dict[str, str]) -> str:
    features = env.get("NPY_DISABLE_CPU_FEATURES") or "none (this CPU has no SIMD beyond numpy's baseline)"
    return (f"other numeric path: numpy SIMD features off: {features}; "
            f"OpenBLAS core: {env.get('OPENBLAS_CORETYPE', 'unchanged (no generic core known here)')}; "
            f"torch kernels: {env['ATEN_CPU_CAPABILITY']}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = other_path_environment()
    print(describe(env), flush=True)
    if not argv or argv == ["--show"]:
        return 0
    return subprocess.call(argv, env=env)


if __name__ == "__main__":
    sys.exit(main())
