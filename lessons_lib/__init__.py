"""lessons_lib: the helper library of the attention course.

Every notebook imports it one way, ``import lessons_lib as ll``, and calls ``ll.X``; each
formula lives in exactly one place:

    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V

Every name in a module's ``__all__`` is also a name of ``lessons_lib``
(``ll.plot_weights`` is ``lessons_lib.figures.attention_maps.plot_weights``). The numpy
reference (``core``) loads at once; everything else (figures and matplotlib, the live figures,
the explorers, the torch backend) loads on first use, so that ``import lessons_lib`` stays fast
and never imports torch or matplotlib.

The layout is the architecture: imports flow one way, up this table (a module imports its own
layer or lower ones, never a private ``_name`` of another module), and a lesson's parts carry
its notebook's name (``lesson07_causal_masking`` is the stills, the explorer, the exercise and the
quiz of ``notebooks/07_causal_masking.ipynb``).

==================  ==================================================================
folder              what lives there
==================  ==================================================================
``_checks.py``      every validator: clear, learner-friendly errors naming the argument
``core/``           the formulas, numpy, read like the paper: attention, masks, multihead,
                    flash (tiled, online softmax), backends (torch SDPA)
``lab/``            what the lessons compute with and measure: data, coref, models (torch),
                    cost, measurements
``figures/``        style (the one look), base (heatmap, figure helpers), attention_maps (the
                    stills several lessons show), the stills of each lesson
                    (``lessonNN_name.py``), ``live/`` (figures drawn in the browser:
                    the wire format, a base, one module per figure kind, the .js and .css)
``explorers/``      sliders beside live figures: ``base.py`` + ``lessonNN_name.py``
``course/``         the environment check, the paper guide, the ✓/✗ feedback box
``exercises/``      checks with feedback: the engine + ``lessonNN_name.py``
``quizzes/``        the quiz model and widget + ``lessonNN_name.py`` (questions as data)
==================  ==================================================================
"""

from __future__ import annotations

import importlib

from .core import attention, flash, masks, multihead  # noqa: F401  (the numpy reference loads at once)


def _version() -> str:
    """The version written once, in pyproject.toml: the source tree's file when the library is imported
    from one (an editable install, whose metadata keeps the version it was installed at until the next
    install: ``make release`` bumps the file without reinstalling), else the installed metadata."""
    import re
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if pyproject.is_file():
        text = pyproject.read_text(encoding="utf-8")
        match = re.search(r'^version = "([^"]+)"', text, re.M)
        if match and re.search(r'^name = "lessons-lib"', text, re.M):
            return match.group(1)
    try:
        return version("lessons-lib")
    except PackageNotFoundError:  # neither installed nor in a source tree
        return "0+unknown"


__version__ = _version()

# module -> its __all__, layer by layer (a name two modules export is taken from the first). Written by
# tools/export_table.py (python tools/export_table.py --write); tests/tools/test_export_table.py fails when
# it is stale.
# exports:begin
_EXPORTS: dict[str, tuple[str, ...]] = {
    "core.attention": ("softmax", "project_qkv", "attention_scores", "scale_scores", "attention_weights",
        "weighted_values", "scaled_dot_product_attention", "softmax_off", "low_memory_attention"),
    "core.backends": ("SDPAResult", "KERNEL_NAMES", "TORCH_CPU_INSTALL", "CHOSEN_BY_TORCH",
        "sdpa_attention", "torch_attention_with_weights", "torch_available", "cuda_available",
        "default_device", "describe_torch", "torch_rope"),
    "core.decoding": ("kv_head_of", "repeat_kv", "grouped_query_attention", "KVCache", "DecodeStep",
        "decode_step", "cached_attention", "decode_loop", "sink_window_mask"),
    "core.flash": ("TILE_SCORES", "default_block_size", "flash_attention", "flash_attention_steps",
        "online_softmax", "online_softmax_update", "OnlineSoftmax", "TileStep"),
    "core.masks": ("causal_mask", "padding_mask", "SequenceMask", "align_sequence_mask",
        "sliding_window_mask", "combine_masks", "causal_average_weights", "additive_mask",
        "bottom_right_causal_mask", "mask_gallery", "causal_mask_mistake", "future_leak",
        "MASKING_RECIPES", "masked_weights", "MaskingRecipe", "compare_masking", "masking_leak",
        "leak_claim"),
    "core.multihead": ("split_heads", "merge_heads", "multi_head_attention", "shape_stages",
        "split_projection", "multi_head_attention_per_head", "multi_head_cost", "handmade_heads",
        "HANDMADE_HEADS"),
    "core.position": ("ROPE_CONVENTIONS", "DEFAULT_BASE", "sinusoidal_positions", "rope_frequencies",
        "rope_angles", "rope_pairs", "rope", "convention_permutation", "Rotary", "as_rotary",
        "alibi_slopes", "alibi_bias"),
    "lab.adapters": ("weights_from_torch_multihead", "weights_from_gpt2_attention",
        "weights_from_bert_attention", "weights_from_nanogpt_attention", "weights_from_llama_attention",
        "attention_weights_of"),
    "lab.coref": ("AGENTS", "PLACES", "AGENT_ADJECTIVES", "PLACE_ADJECTIVES", "NONE_ADJECTIVES",
        "NOTHING", "REFERENTS", "TEMPLATES", "VOCAB", "SINK", "PAD", "MAX_LEN", "SENTENCE_A",
        "SENTENCE_B", "CorefSet", "CorefData", "make_coref_data", "held_out_pairs", "training_pairs",
        "encode_sentence", "expected_referent", "baseline_accuracies"),
    "lab.cost": ("METHODS", "default_methods", "score_count", "attention_flops", "score_memory",
        "estimate_memory", "check_fits", "Measurement", "measure", "measure_scaling",
        "measure_block_sizes", "BlockSizes", "loglog_slope", "CostTable"),
    "lab.data": ("SENTENCES", "tokenize", "tokens_of_length", "embed_tokens", "positional_encoding",
        "projection_weights", "random_qkv", "coreference_example", "COREFERENCE_FEATURES"),
    "lab.generation": ("GENERATION_TOKENS", "GenerationTrace", "trace_generation", "cache_agreement",
        "GenerationFlops", "generation_flops", "DecodeTimes", "measure_decode", "PrefillDecode",
        "measure_prefill_decode", "pool_kv_heads", "convert_to_gqa", "GQAConversion", "gqa_conversion",
        "pool_model_kv_heads", "sink_head", "WindowRun", "window_experiment", "ring_buffer",
        "SinkEviction", "evict_sink", "conversion_verdict", "pooled_verdict"),
    "lab.kv_memory": ("ModelShape", "Published", "PRESETS", "kv_cache_bytes", "KVMemory",
        "kv_cache_memory", "preset", "size_text", "calculated", "published_comparison"),
    "lab.llama": ("SMALL_LLAMA", "LLAMA_SENTENCE", "LlamaInside", "tiny_llama", "llama_attention",
        "look_inside_llama"),
    "lab.measurements": ("measure_score_variance", "difference_claim", "time_ratio_verdict",
        "slope_verdict", "SAME_SPEED", "SLOPE_NEAR_TWO"),
    "lab.models": ("attend", "AttentionLayer", "CorefModel", "TrainingRun", "train_coref_model",
        "accuracy", "Reading", "read_attention", "deterministic", "SinkHead", "SinkRun",
        "train_sink_head", "sink_summary"),
    "lab.position": ("POSITION_KINDS", "ORDER_WORDS", "ORDER_FILLERS", "attend_tokens", "ShuffleResult",
        "rope_vectors", "RotationView", "rotation_view", "offset_scores", "sinusoid_similarity",
        "shuffle_experiment", "OrderSet", "OrderData", "make_order_data", "OrderRun", "train_order_model",
        "OrderComparison", "compare_positions", "LEARNED", "CHANCE"),
    "lab.real_model": ("ModelAttention", "look_inside", "gpt2_attention", "gpt2_layer_weights",
        "course_model_attention", "GPT2_NAME", "offline_reason"),
    "figures.attention_maps": ("plot_scores", "plot_weights", "plot_row_weights", "plot_head_grid"),
    "figures.base": ("heatmap", "panel_figure", "LessonFigure"),
    "figures.lesson02_step1_qkv": ("plot_projection",),
    "figures.lesson04_step3_scale_softmax": ("plot_score_variance",),
    "figures.lesson05_step4_weighted_values": ("plot_outputs", "plot_convex_combination",
        "convex_hull_2d"),
    "figures.lesson06_multi_head": ("plot_head_shapes", "plot_head_view"),
    "figures.lesson07_causal_masking": ("plot_mask", "plot_mask_gallery", "plot_masking_steps",
        "plot_masking_recipes"),
    "figures.lesson08_cost_and_flashattention": ("METHOD_LOOK", "tile_order", "plot_scaling",
        "plot_tile_grid", "plot_tile_steps", "plot_block_sizes"),
    "figures.lesson09_attention_in_action": ("plot_loss_curve", "plot_referent_rows", "plot_reading",
        "plot_it_rows", "plot_layer_grid", "plot_training_rows", "plot_sink_experiment", "head_names"),
    "figures.lesson11_position": ("plot_shuffle", "plot_sinusoids", "plot_rotation_dials",
        "plot_offset_scores", "plot_alibi_row", "plot_rope_view", "plot_alibi", "plot_order_losses",
        "slope_text", "QUERY_COLOUR", "KEY_COLOUR"),
    "figures.lesson12_generation": ("plot_generation_step", "plot_cache_work", "plot_kv_memory",
        "plot_gqa_heads", "plot_window_run", "plot_ring_buffer", "plot_decode_times", "CACHED_COLOUR",
        "RECOMPUTED_COLOUR"),
    "figures.live": ("Heatmap", "HeatmapGrid", "Bars", "LinePlot", "MatrixProduct", "ProductPanel",
        "HeadView", "RotationDials", "LiveFigure", "Access"),
    "figures.live.access": ("Access",),
    "figures.live.heads": ("HeadView", "ROW", "COLUMN"),
    "figures.live.rotations": ("RotationDials",),
    "figures.style": ("CMAP_WEIGHTS", "CMAP_VALUES", "MASK_NOTE", "tick_indices", "tick_labels",
        "colormap_table"),
    "explorers.base": ("D_K_OPTIONS",),
    "explorers.lesson02_step1_qkv": ("ProjectionExplorer",),
    "explorers.lesson03_step2_scores": ("ScoresExplorer",),
    "explorers.lesson04_step3_scale_softmax": ("ScaleSoftmaxExplorer",),
    "explorers.lesson05_step4_weighted_values": ("PipelineExplorer",),
    "explorers.lesson06_multi_head": ("HeadGridExplorer", "N_HEADS_OPTIONS", "D_MODEL_OPTIONS"),
    "explorers.lesson07_causal_masking": ("CausalMaskExplorer", "CustomMaskExplorer", "mask_tokens"),
    "explorers.lesson08_cost_and_flashattention": ("ScalingExplorer", "TileExplorer"),
    "explorers.lesson09_attention_in_action": ("SentenceExplorer", "TrainingExplorer"),
    "explorers.lesson10_review_and_paper": ("RealModelExplorer",),
    "explorers.lesson11_position": ("ShuffleExplorer", "SinusoidExplorer", "RopeExplorer",
        "SHUFFLE_SENTENCES"),
    "explorers.lesson12_generation": ("KVCacheExplorer", "MemoryExplorer", "GroupedQueryExplorer",
        "WindowExplorer", "CONTEXTS", "KV_HEAD_OPTIONS"),
    "course.environment": ("EnvironmentReport", "Component", "environment_report", "widget_check"),
    "course.feedback": ("PASSED", "FAILED", "NOT_ATTEMPTED", "Badge", "badge", "box_html", "Feedback"),
    "course.lessons": ("Lesson", "LESSONS", "Part", "PARTS", "part_of", "lessons_by_part"),
    "course.paper_guide": ("Equation", "EQUATIONS", "code_line", "code_lines", "equation_table",
        "equation_list", "paper_sizes", "ARXIV"),
    "exercises": ("Feedback", "EXERCISES", "check_street_query", "check_projection", "check_scores",
        "check_softmax", "check_scaling", "check_weighted_sum", "check_split_heads", "check_merge_heads",
        "check_next_token_head", "check_causal_weights", "check_online_update", "check_softmax_off",
        "check_rope", "check_decode_step", "check_repeat_kv"),
    "exercises.grading": ("assert_passes", "read_verdict", "Verdict", "hidden_cases", "check_hidden"),
    "exercises.lesson01_why_attention": ("check_street_query",),
    "exercises.lesson02_step1_qkv": ("check_projection",),
    "exercises.lesson03_step2_scores": ("check_scores",),
    "exercises.lesson04_step3_scale_softmax": ("check_softmax", "check_scaling"),
    "exercises.lesson05_step4_weighted_values": ("check_weighted_sum",),
    "exercises.lesson06_multi_head": ("check_split_heads", "check_merge_heads", "check_next_token_head"),
    "exercises.lesson07_causal_masking": ("check_causal_weights",),
    "exercises.lesson08_cost_and_flashattention": ("check_online_update",),
    "exercises.lesson09_attention_in_action": ("check_softmax_off",),
    "exercises.lesson11_position": ("check_rope",),
    "exercises.lesson12_generation": ("check_decode_step", "check_repeat_kv"),
    "quizzes.concepts": ("Concept", "CONCEPTS", "concept_quiz", "record_answer", "read_record",
        "phase_score", "normalised_gain"),
    "quizzes.model": ("Option", "Question"),
    "quizzes.widget": ("Quiz", "QUIZZES", "show"),
}
# exports:end

# name -> module, the first module that exports it
_WHERE: dict[str, str] = {}
for _module, _names in _EXPORTS.items():
    _WHERE.update({_name: _module for _name in _names if _name not in _WHERE})

#: the subpackages, each loaded on first use as ``ll.core``, ``ll.figures``, ...
_PACKAGES = ("core", "lab", "figures", "explorers", "course", "exercises", "quizzes")

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    """Load a module on first use: ``lessons_lib.plot_weights`` or ``lessons_lib.figures``."""
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value  # the next lookup costs nothing
        return value
    if name in _PACKAGES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'lessons_lib' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE) | set(_PACKAGES))
