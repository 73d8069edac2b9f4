"""Explorer constructors: every documented range builds at both ends; a value outside it is refused.

A value outside a control's range raises ``ValueError`` (or ``TypeError`` for a wrong kind) naming
the argument: never traitlets' ``TraitError``, never silently clamped (a token index past the end
must not become the last token).
"""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.explorers import lesson06_multi_head as head_explorer
from lessons_lib.explorers import lesson07_causal_masking as mask_explorers
from lessons_lib.explorers import lesson08_cost_and_flashattention as cost_explorers
from lessons_lib.lab import cost

# explorer -> argument -> (lowest, highest) documented value, and a value just outside each end
RANGES = {
    "ProjectionExplorer": {"d_k": (1, 512, [0, 3, 1024]), "projection": ("Q", "V", ["W", "q"])},
    "ScoresExplorer": {"seq_len": (2, 128, [1, 129]), "d_k": (1, 512, [0, 1024])},
    "ScaleSoftmaxExplorer": {"temperature": (0.1, 10.0, [0.05, 11.0]), "query": (0, 6, [-1, 7]),
                             "d_k": (1, 512, [5])},
    "PipelineExplorer": {"seq_len": (2, 128, [1, 129]), "d_v": (1, 64, [0, 65]), "d_k": (1, 512, [6])},
    "HeadGridExplorer": {"n_heads": (1, 16, [3, 32]), "d_model": (16, 128, [8, 256]),
                         "seq_len": (2, 32, [1, 33]), "token": (0, 11, [-1, 12])},
    "CausalMaskExplorer": {"seq_len": (2, 16, [1, 17]), "query": (0, 3, [-1, 4])},
    "CustomMaskExplorer": {"n": (2, 10, [1, 11])},
}


def _make(name, **kwargs):
    module = {"HeadGridExplorer": head_explorer, "CausalMaskExplorer": mask_explorers,
              "CustomMaskExplorer": mask_explorers}.get(name, ll)
    return getattr(module, name)(**kwargs)


def _both_ends():
    for name, args in RANGES.items():
        for arg, (lo, hi, _) in args.items():
            for value in (lo, hi):
                yield pytest.param(name, arg, value, id=f"{name}-{arg}={value}")


def _outside():
    for name, args in RANGES.items():
        for arg, (_, _, bad) in args.items():
            for value in bad:
                yield pytest.param(name, arg, value, id=f"{name}-{arg}={value}")


def _with_dependents(name, arg, value):
    """The argument, plus what its range depends on (a query needs the sequence long enough)."""
    kwargs = {arg: value}
    if name == "PipelineExplorer" and arg == "seq_len":
        kwargs["query"] = 0
    if name in ("HeadGridExplorer", "CausalMaskExplorer") and arg == "seq_len":
        kwargs["token" if name == "HeadGridExplorer" else "query"] = 0
    if name == "CausalMaskExplorer" and arg == "query":
        kwargs["seq_len"] = 4
    if name == "HeadGridExplorer" and arg == "token":
        kwargs["seq_len"] = 12
    return kwargs


@pytest.mark.parametrize("name, arg, value", list(_both_ends()))
def test_explorers_build_at_both_ends_of_every_range(name, arg, value):
    explorer = _make(name, **_with_dependents(name, arg, value))
    assert explorer.widget is not None and not explorer.error_box.value


@pytest.mark.parametrize("name, arg, value", list(_outside()))
def test_a_value_outside_the_range_is_refused_naming_the_argument(name, arg, value):
    with pytest.raises(ValueError) as info:
        _make(name, **_with_dependents(name, arg, value))
    assert arg in str(info.value)


@pytest.mark.parametrize("name, arg, value", [
    ("HeadGridExplorer", "seed", "0"), ("HeadGridExplorer", "sharpness", "3"),
    ("CausalMaskExplorer", "seed", 1.5), ("CustomMaskExplorer", "n", "6"),
    ("CustomMaskExplorer", "seed", None),
])
def test_a_wrong_kind_of_value_is_refused_naming_the_argument(name, arg, value):
    with pytest.raises((TypeError, ValueError)) as info:
        _make(name, **{arg: value})
    assert arg in str(info.value)


@pytest.mark.parametrize("n", [2, 10])
def test_every_mask_preset_builds_at_both_ends_of_n(n):
    presets = mask_explorers.CustomMaskExplorer(n).presets
    for preset in presets:
        explorer = mask_explorers.CustomMaskExplorer(n, preset=preset)
        assert explorer.mask.shape == (n, n) and not explorer.error_box.value


@pytest.fixture(scope="module")
def table():
    return cost.measure_scaling([128, 256], ["naive numpy"], d=8, repeats=1, memory=False, progress=False)


@pytest.mark.parametrize("n", [cost_explorers.N_MIN, cost_explorers.N_MAX])
def test_the_scaling_explorer_builds_at_both_ends(table, n):
    assert cost_explorers.ScalingExplorer(table, n=n).widget is not None


@pytest.mark.parametrize("n", [cost_explorers.N_MIN - cost_explorers.N_STEP,
                               cost_explorers.N_MAX + cost_explorers.N_STEP])
def test_the_scaling_explorer_refuses_n_outside(table, n):
    with pytest.raises(ValueError, match="n must be"):
        cost_explorers.ScalingExplorer(table, n=n)


def test_the_tile_explorer_builds_at_both_ends_and_refuses_outside():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((8, 4)), rng.standard_normal((8, 4)), rng.standard_normal((8, 3))
    for tile, feature in ((1, 0), (2, 2)):
        assert cost_explorers.TileExplorer(q, k, v, tile=tile, feature=feature).widget is not None
    for kwargs, arg in (({"tile": 3}, "tile"), ({"tile": 0}, "tile"), ({"feature": 3}, "feature")):
        with pytest.raises(ValueError, match=arg):
            cost_explorers.TileExplorer(q, k, v, **kwargs)


@pytest.fixture(scope="module")
def run():
    pytest.importorskip("torch")
    return ll.train_coref_model(steps=4, snapshot_every=2, progress=False)


def test_the_training_explorer_builds_at_both_ends_and_refuses_outside(run):
    for step in (0, 4):
        for sentence in ("A", "B"):
            assert ll.TrainingExplorer(run, step=step, sentence=sentence).widget is not None
    with pytest.raises(ValueError, match="step"):
        ll.TrainingExplorer(run, step=5)
    with pytest.raises(ValueError, match="sentence"):
        ll.TrainingExplorer(run, sentence="C")
    with pytest.raises(TypeError, match="sentence"):
        ll.SentenceExplorer(run, sentence=3)
