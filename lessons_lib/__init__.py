"""lessons_lib: the helper library of the attention course.

Every notebook imports from here, so each formula lives in exactly one place:

    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V

The numpy modules are the readable reference. Heavier modules (plots,
widgets, the torch backend) load lazily on first use, so that
``import lessons_lib`` stays fast and never imports torch.
"""

from __future__ import annotations

import importlib

from .attention import (
    attention_scores,
    attention_weights,
    project_qkv,
    scale_scores,
    scaled_dot_product_attention,
    softmax,
    weighted_values,
)
from .flash import flash_attention
from .masks import causal_mask, combine_masks, padding_mask, sliding_window_mask
from .multihead import merge_heads, multi_head_attention, split_heads

__version__ = "0.1.0"

# name -> submodule, for the names that load on first use (see __getattr__).
_LAZY = {
    # torch / SDPA path
    "sdpa_attention": "backends",
    "torch_attention_with_weights": "backends",
    "torch_available": "backends",
    "cuda_available": "backends",
    "SDPAResult": "backends",
    # toy data
    "tokenize": "data",
    "SENTENCES": "data",
    "embed_tokens": "data",
    "projection_weights": "data",
    "random_qkv": "data",
    "tokens_of_length": "data",
    "coreference_example": "data",
    # environment check
    "environment_report": "environment",
    # figures (matplotlib)
    "heatmap": "plots",
    "plot_scores": "plots",
    "plot_weights": "plots",
    "plot_mask": "plots",
    "plot_outputs": "plots",
    "plot_projection": "plots",
    "plot_score_variance": "plots",
    "plot_row_weights": "plots",
    # live explorers (ipywidgets)
    "ProjectionExplorer": "widgets",
    "ScoresExplorer": "widgets",
    "ScaleSoftmaxExplorer": "widgets",
    "PipelineExplorer": "widgets",
    # exercises and quizzes
    "Feedback": "exercises",
    "check_softmax": "exercises",
    "check_scores": "exercises",
    "check_scaling": "exercises",
    "check_weighted_sum": "exercises",
    "check_projection": "exercises",
    "Quiz": "quiz",
    "QUIZZES": "quiz",
    "Question": "quiz",
    "Option": "quiz",
}

_SUBMODULES = {
    "attention", "masks", "multihead", "flash", "backends", "data",
    "plots", "widgets", "exercises", "quiz", "environment", "feedback",
}


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(module, name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'lessons_lib' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)


__all__ = [
    "attention_scores", "attention_weights", "project_qkv", "scale_scores",
    "scaled_dot_product_attention", "softmax", "weighted_values",
    "flash_attention", "causal_mask", "combine_masks", "padding_mask",
    "sliding_window_mask", "merge_heads", "multi_head_attention", "split_heads",
    *_LAZY,
]
