"""lessons_lib: the helper library of the attention course.

Every notebook imports from here, so each formula lives in exactly one place:

    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V

Every name in a module's ``__all__`` is also a name of ``lessons_lib``
(``lessons_lib.plot_weights`` is ``lessons_lib.plots.plot_weights``). The numpy
reference (attention, masks, multihead, flash) loads at once; everything else
(plots and matplotlib, the live figures, the explorers, the torch backend) loads
on first use, so that ``import lessons_lib`` stays fast and never imports torch
or matplotlib.

Where things are:

==================  ==================================================================
module              what it holds
==================  ==================================================================
``attention``       the numpy reference of the four steps and their composition
``masks``           causal, padding and sliding-window masks (True = may attend)
``multihead``       split, attend per head, merge
``flash``           tiled attention with the online softmax
``cost``            counting and measuring attention's cost (notebook 08)
``cost_plots``      its figures; ``cost_explorers`` its explorers
``backends``        torch SDPA (CUDA when available) and its report
``data``            the course's sentences, tokens, embeddings, projections
``measurements``    what lessons measure (the variance of q·k against d_k)
``style``           colours, colour maps, sizes, the look of masked cells
``plots``           matplotlib figures (the stills on static pages, too)
``live_figures``    figures drawn in the browser (anywidget): heatmap, grid, bars, ...
``explorers``       sliders + live figures, one explorer per lesson (02-05)
``head_explorer``   the head grid of notebook 06
``mask_explorers``  the causal-mask and custom-mask explorers of notebook 07
``exercises``       checks with feedback (engine + one module per lesson)
``feedback``        the ✓/✗ feedback box shared by exercises and quizzes
``quiz``            the quizzes
``environment``     the setup check of notebook 00
``coref``           the synthetic coreference sentences of notebook 09
``models``          the tiny attention model of notebook 09 (torch, loaded on first use)
``model_views``     its figures and explorers
``paper_guide``     Vaswani et al. §3.2, equation by equation beside our code
``adapters``        real models' attention weights (torch, GPT-2, BERT, nanoGPT) in our layout
``real_model``      lesson 10's look inside GPT-2 small (the course's own model offline)
==================  ==================================================================
"""

from __future__ import annotations

import importlib

from . import attention, flash, masks, multihead  # noqa: F401  (the numpy reference loads at once)

__version__ = "0.2.0"

# module -> its __all__, for every module whose names lessons_lib re-exports. Modules listed first win
# a name that two modules export (exercises re-exports feedback's Feedback). The table only saves
# importing every module to find a name: tests/test_exports.py checks it against each module's real
# __all__ and prints the corrected table when a module gains or loses a name (paste it here).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "attention": ("softmax", "project_qkv", "attention_scores", "scale_scores", "attention_weights",
                  "weighted_values", "scaled_dot_product_attention", "softmax_off"),
    "masks": ("causal_mask", "padding_mask", "SequenceMask", "align_sequence_mask", "sliding_window_mask",
              "combine_masks",
              "causal_average_weights", "additive_mask", "bottom_right_causal_mask", "mask_gallery",
              "causal_mask_mistake", "future_leak"),
    "multihead": ("split_heads", "merge_heads", "multi_head_attention", "shape_stages", "split_projection",
                  "multi_head_attention_per_head", "multi_head_cost", "handmade_heads", "HANDMADE_HEADS"),
    "flash": ("TILE_SCORES", "default_block_size", "flash_attention", "flash_attention_steps",
              "online_softmax", "online_softmax_update", "OnlineSoftmax", "TileStep"),
    "backends": ("SDPAResult", "KERNEL_NAMES", "TORCH_CPU_INSTALL", "CHOSEN_BY_TORCH", "sdpa_attention",
                 "torch_attention_with_weights", "torch_available", "cuda_available", "default_device",
                 "describe_torch"),
    "data": ("SENTENCES", "tokenize", "tokens_of_length", "embed_tokens", "positional_encoding",
             "projection_weights", "random_qkv", "coreference_example", "COREFERENCE_FEATURES"),
    "measurements": ("measure_score_variance",),
    "style": ("CMAP_WEIGHTS", "CMAP_VALUES", "MASK_NOTE", "tick_indices", "tick_labels", "colormap_table"),
    "plots": ("heatmap", "plot_scores", "plot_weights", "plot_mask", "plot_outputs", "plot_projection",
              "plot_score_variance", "plot_row_weights", "plot_convex_combination", "convex_hull_2d",
              "panel_figure", "LessonFigure", "plot_head_shapes", "plot_head_grid", "plot_mask_gallery",
              "plot_masking_steps"),
    "live_figures": ("Heatmap", "HeatmapGrid", "Bars", "LinePlot", "MatrixProduct", "ProductPanel",
                     "LiveFigure"),
    "explorers": ("ProjectionExplorer", "ScoresExplorer", "ScaleSoftmaxExplorer", "PipelineExplorer",
                  "D_K_OPTIONS"),
    "feedback": ("PASSED", "FAILED", "NOT_ATTEMPTED", "Badge", "badge", "box_html", "Feedback"),
    "exercises": ("Feedback", "EXERCISES", "check_street_query", "check_projection", "check_scores",
                  "check_softmax", "check_scaling", "check_weighted_sum", "check_split_heads",
                  "check_merge_heads", "check_next_token_head", "check_causal_weights",
                  "check_online_update", "check_softmax_off"),
    "coref": ("AGENTS", "PLACES", "AGENT_ADJECTIVES", "PLACE_ADJECTIVES", "NONE_ADJECTIVES", "NOTHING",
              "REFERENTS", "TEMPLATES", "VOCAB", "SINK", "PAD", "MAX_LEN", "SENTENCE_A", "SENTENCE_B",
              "CorefSet", "CorefData", "make_coref_data", "held_out_pairs", "training_pairs",
              "encode_sentence", "expected_referent", "baseline_accuracies"),
    "models": ("attend", "AttentionLayer", "CorefModel", "TrainingRun", "train_coref_model", "accuracy",
               "Reading", "read_attention", "deterministic", "SinkHead", "SinkRun", "train_sink_head",
               "sink_summary"),
    "model_views": ("plot_loss_curve", "plot_referent_rows", "plot_it_rows", "plot_layer_grid",
                    "plot_training_rows", "plot_sink_experiment", "head_names", "SentenceExplorer",
                    "TrainingExplorer"),
    "paper_guide": ("Equation", "EQUATIONS", "code_line", "equation_table", "paper_sizes", "ARXIV"),
    "head_explorer": ("HeadGridExplorer", "N_HEADS_OPTIONS", "D_MODEL_OPTIONS"),
    "mask_explorers": ("CausalMaskExplorer", "CustomMaskExplorer", "mask_tokens"),
    "cost": ("METHODS", "default_methods", "score_count", "attention_flops", "score_memory",
             "estimate_memory", "check_fits", "Measurement", "measure", "measure_scaling",
             "measure_block_sizes", "BlockSizes", "loglog_slope", "CostTable"),
    "cost_plots": ("METHOD_LOOK", "tile_order", "plot_scaling", "plot_tile_grid", "plot_tile_steps",
                   "plot_block_sizes"),
    "cost_explorers": ("ScalingExplorer", "TileExplorer"),
    "quiz": ("Option", "Question", "Quiz", "QUIZZES", "show"),
    "environment": ("EnvironmentReport", "Component", "environment_report", "widget_check"),
    "adapters": ("weights_from_torch_multihead", "weights_from_gpt2_attention", "weights_from_bert_attention",
                 "weights_from_nanogpt_attention", "attention_weights_of"),
    "real_model": ("ModelAttention", "look_inside", "gpt2_attention", "gpt2_layer_weights",
                   "course_model_attention", "RealModelExplorer", "GPT2_NAME"),
}

# name -> module, the first module that exports it
_WHERE: dict[str, str] = {}
for _module, _names in _EXPORTS.items():
    for _name in _names:
        _WHERE.setdefault(_name, _module)
del _module, _names, _name

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    """Load a module on first use: ``lessons_lib.plot_weights`` or ``lessons_lib.plots``."""
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value  # the next lookup costs nothing
        return value
    if name in _EXPORTS:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'lessons_lib' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE) | set(_EXPORTS))
