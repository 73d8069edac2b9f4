"""lessons_lib: the helper library of the attention course.

Every notebook imports it one way, ``import lessons_lib as ll``, and calls ``ll.X``; each
formula lives in exactly one place:

    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V

Every name in a module's ``__all__`` is also a name of ``lessons_lib``
(``ll.plot_weights`` is ``lessons_lib.figures.attention_maps.plot_weights``). The numpy
reference (``core``) loads at once; everything else (figures and matplotlib, the live figures,
the explorers, the torch backend) loads on first use, so that ``import lessons_lib`` stays fast
and never imports torch or matplotlib.

The layout is the architecture. The layers below are listed lowest first (:data:`LAYERS`): a module
imports from its own layer or one above it in this list, never a private ``_name`` of another module,
and never in a circle (``tests/docs/test_architecture.py`` holds these rules). A lesson's parts carry
its notebook's name (``lesson07_causal_masking`` is the stills, the explorer, the exercise and the quiz
of ``notebooks/07_causal_masking.ipynb``). Each layer's entry is the first paragraph of its own
docstring, copied here, into README.md and into CONTRIBUTING.md by ``tools/layer_table.py``.

.. layers:begin

``_checks.py``
    Every validator of the library: errors in a learner's words that name the argument, the memory
    guard, the figures' text, label and colour-range rules.
``_seal.py``
    What the course's checks rely on, recorded when the library loads, so that a check in the
    learner's kernel names what a notebook changed of it.
``core/``
    The formulas in numpy, read like the paper: ``attention`` (the four steps, their composition,
    the low-memory variant), ``masks`` (causal, padding and sliding-window masks, True = may attend,
    aligned as in torch), ``multihead`` (split, attend, concatenate, W_O; the per-head form),
    ``flash`` (tiles and the online softmax, never an L × S matrix), ``position`` (lesson 11:
    sinusoids, RoPE in both layouts, ALiBi), ``decoding`` (lesson 12: the KV cache, a decode step,
    key/value heads shared by groups of query heads), ``linear`` (lesson 13: linear attention, a
    decaying state and the delta rule, each parallel, recurrent and chunked), ``latent`` (lesson 14:
    multi-head latent attention, its cache, the absorbed order) and ``sparse`` (lesson 14: the
    lightning indexer, each query's top-k keys); ``backends`` is the torch path, SDPA on CUDA when
    there is one (torch imported lazily).
``lab/``
    What the lessons compute with and measure: ``data`` (the course's sentences, embeddings, random
    Q, K, V), ``heads`` (lesson 06: the shape at each stage, the cost of heads, heads built by
    hand), ``masking`` (lesson 07: the causal average, the gallery, the convention trap, the leak
    experiment, wrong ways to mask), ``cost`` (lesson 08: counts, memory estimates, measured
    scaling), ``measurements`` (claims and verdicts that hold on every CPU), ``coref`` and
    ``models`` (lesson 09: the synthetic coreference set, the tiny torch model trained
    deterministically), ``adapters`` and ``real_model`` (lesson 10: real models' attention weights
    in the course's layout, GPT-2 or the course's own model offline), ``position`` (lesson 11:
    shuffled tokens, the order task), ``generation``, ``char_model``, ``kv_memory`` and ``llama``
    (lesson 12: generation traced and timed, pooled key/value heads, windows and sinks; a character
    model trained in seconds to generate text with; the KV-cache calculator; a Llama-style model's
    layers recomputed), ``fixed_state`` and ``recall`` (lesson 13: a state of fixed size against the
    growing cache, memory and time per token; multi-query associative recall, tiny models with
    softmax attention, linear attention, a decaying state, the delta rule or a sliding window
    trained on it, their verdicts), ``deepseek`` (lesson 14: the latent cache beside MHA, GQA and
    MQA for DeepSeek's published shapes; transformers' DeepSeek attention and indexer read into the
    course's weights).
``figures/``
    Figures: ``style`` (one look: colormaps, fonts, masked cells hatched, never drawn as 0; the WCAG
    contrast ratio), ``base`` (heatmap, figure helpers), ``attention_maps`` (the stills several
    lessons show: scores, weights, one query's weights, every head), ``tables`` (a still's numbers
    as a collapsed table beside it, read from what it draws; LaTeX read as words), the stills of
    each lesson (``lessonNN_name.py``, each with alt text), and ``live/``, the figures drawn in the
    browser (the wire format, one module per figure kind, ``live_figures.js`` and ``.css`` shipped
    in the package, no CDN, no build step, each figure's numbers as a table behind a button;
    ``access``: a group's live region and its controls' accessible names).
``explorers/``
    Explorers, sliders beside live figures: ``base`` (the explorer contract: controls, live figures,
    the polite live region, a still picture for static pages) and ``lessonNN_name.py`` (each
    lesson's explorers).
``course/``
    The course around the lessons: ``lessons`` (the registry: each lesson's notebook, titles,
    measured minutes, PyTorch or not, exercise points and cuts; the tools, tests, guide and course
    maps read it), ``environment`` (the set-up check of lesson 00), ``paper_guide`` (Vaswani et al.
    §3.2 beside the code), ``feedback`` (the ✓/✗ box of checks and quizzes), ``project`` (what
    pyproject.toml says: the version, the Python floor), ``classroom_server`` (the kernel manager of
    a class's Jupyter servers), ``grading_policy`` (the late penalty and the light feedback page in
    a teacher's nbgrader config).
``exercises/``
    Exercises checked with feedback: ``engine`` runs a learner's function on cases and names the
    mistake, from ``runner`` (the learner's code in a child process under a time limit: ``outcome``,
    what a call did and how answers compare; ``child``, what runs in the child; ``processes``, the
    fork, the time limit and the stopping; ``wire``, the pipe between them; ``watch``, the hook that
    names the library's answers a call reached), ``mistakes``, ``messages`` and ``catalogue`` (the
    mistakes, their words, the ones any exercise can make); ``grading`` (nbgrader's graded cells,
    the unseen cases and their seeds from the teacher's secret, ``read_verdict``); ``judge`` (the
    grade's judge: a fresh Python that checks a submission's answers in forked children, never in
    the learner's kernel), ``autograde`` (its step in nbgrader's autograde) and ``sandbox`` (where
    both run a submission's code: bubblewrap, read-only, no network, nothing left running, not as
    the grader); ``lessonNN_name.py`` (each lesson's cases, unseen-case generator and candidate
    mistakes).
``quizzes/``
    Quizzes that explain every option: ``model`` (questions, options), ``widget`` (the quiz widgets,
    ``ll.show("04")``), ``concepts`` (the ungraded concept quiz that opens lesson 00 and closes
    lesson 10, its first answers kept for the class report), ``lessonNN_name.py`` (each lesson's
    questions, as data).

.. layers:end
"""

from __future__ import annotations

import importlib
import sys

from . import _seal
from .core import attention, flash, masks, multihead  # noqa: F401  (the numpy reference loads at once)
from .course import feedback as _feedback  # noqa: F401  (the judge's box and verdicts: recorded below)
from .course import project
from .lab import data as _data  # noqa: F401  (lesson 01's check reads its sentence: recorded below)

#: the course's version, written once in pyproject.toml (:func:`lessons_lib.course.project.version`)
__version__ = project.version()

#: module -> its __all__, layer by layer (a name two modules export is taken from the first). Written by
#: tools/export_table.py (python tools/export_table.py --write); tests/tools/test_export_table.py fails when
#: it is stale.
# exports:begin
EXPORTS: dict[str, tuple[str, ...]] = {
    "core.attention": ("softmax", "project_qkv", "attention_scores", "scale_scores", "attention_weights",
        "weighted_values", "scaled_dot_product_attention", "softmax_off", "low_memory_attention"),
    "core.backends": ("SDPAResult", "KERNEL_NAMES", "TORCH_CPU_INSTALL", "CHOSEN_BY_TORCH",
        "sdpa_attention", "torch_attention_with_weights", "torch_available", "cuda_available",
        "default_device", "describe_torch", "torch_rope"),
    "core.decoding": ("kv_head_of", "repeat_kv", "grouped_query_attention", "KVCache", "DecodeStep",
        "decode_step", "cached_attention", "decode_loop", "sink_window_mask", "sampling_probabilities",
        "sample_token"),
    "core.flash": ("TILE_SCORES", "default_block_size", "flash_attention", "flash_attention_steps",
        "online_softmax", "online_softmax_update", "OnlineSoftmax", "TileStep"),
    "core.latent": ("WEIGHT_NAMES", "rms_norm", "LatentCache", "mla_attention", "mla_scores",
        "absorbed_rope_scores"),
    "core.linear": ("FEATURE_MAPS", "FORMS", "DEFAULT_CHUNK_SIZE", "feature_map", "l2_normalize",
        "decay_mask", "linear_attention_step", "decay_step", "delta_rule_step", "linear_attention",
        "decay_attention", "delta_rule"),
    "core.masks": ("causal_mask", "padding_mask", "SequenceMask", "align_sequence_mask",
        "sliding_window_mask", "combine_masks", "additive_mask", "bottom_right_causal_mask"),
    "core.multihead": ("split_heads", "merge_heads", "multi_head_attention", "split_projection",
        "multi_head_attention_per_head"),
    "core.position": ("ROPE_CONVENTIONS", "DEFAULT_BASE", "sinusoidal_positions", "rope_frequencies",
        "rope_angles", "rope_pairs", "rope", "convention_permutation", "Rotary", "as_rotary",
        "alibi_slopes", "alibi_bias"),
    "core.sparse": ("INDEXER_WEIGHT_NAMES", "dsa_indexer_scores", "lightning_indexer", "top_k_selection",
        "sparse_attention"),
    "lab.adapters": ("weights_from_torch_multihead", "weights_from_gpt2_attention",
        "weights_from_bert_attention", "weights_from_nanogpt_attention", "weights_from_llama_attention",
        "attention_weights_of"),
    "lab.char_model": ("char_corpus", "CharLayer", "CharModel", "train_char_model", "CHAR_CONTEXT"),
    "lab.coref": ("AGENTS", "PLACES", "AGENT_ADJECTIVES", "PLACE_ADJECTIVES", "NONE_ADJECTIVES",
        "NOTHING", "REFERENTS", "TEMPLATES", "VOCAB", "SINK", "PAD", "MAX_LEN", "SENTENCE_A",
        "SENTENCE_B", "CorefSet", "CorefData", "make_coref_data", "held_out_pairs", "training_pairs",
        "encode_sentence", "expected_referent", "baseline_accuracies"),
    "lab.cost": ("METHODS", "default_methods", "score_count", "attention_flops", "score_memory",
        "estimate_memory", "check_fits", "Measurement", "measure", "measure_scaling",
        "measure_block_sizes", "BlockSizes", "loglog_slope", "CostTable"),
    "lab.data": ("SENTENCES", "tokenize", "tokens_of_length", "embed_tokens", "positional_encoding",
        "projection_weights", "random_qkv", "coreference_example", "COREFERENCE_FEATURES"),
    "lab.deepseek": ("LatentShape", "DEEPSEEK_V2", "DEEPSEEK_V3", "DEEPSEEK_67B", "latent_cache_bytes",
        "cache_per_token", "equivalent_gqa_groups", "v2_against_67b", "weights_from_deepseek_attention",
        "weights_from_deepseek_indexer", "TINY_MLA", "tiny_mla_weights", "SparseRun", "sparse_run",
        "absorption_counts", "sparse_counts", "measure_orders", "look_inside_deepseek"),
    "lab.fixed_state": ("state_and_cache", "StateAndCacheTimes", "measure_state_and_cache", "SEPARATED"),
    "lab.generation": ("GENERATION_TOKENS", "GenerationTrace", "trace_generation", "cache_agreement",
        "GenerationFlops", "generation_flops", "DecodeTimes", "measure_decode", "PrefillDecode",
        "measure_prefill_decode", "pool_kv_heads", "convert_to_gqa", "GQAConversion", "gqa_conversion",
        "pool_model_kv_heads", "sink_head", "WindowRun", "window_experiment", "ring_buffer",
        "SinkEviction", "evict_sink", "conversion_verdict", "pooled_verdict"),
    "lab.heads": ("shape_stages", "multi_head_cost", "handmade_heads", "HANDMADE_HEADS"),
    "lab.kv_memory": ("ModelShape", "Published", "PRESETS", "kv_cache_bytes", "KVMemory",
        "kv_cache_memory", "preset", "size_text", "calculated", "published_comparison"),
    "lab.llama": ("SMALL_LLAMA", "LLAMA_SENTENCE", "LlamaInside", "tiny_llama", "llama_attention",
        "look_inside_llama", "course_built_llama", "transformers_agreement"),
    "lab.masking": ("causal_average_weights", "mask_gallery", "causal_mask_mistake", "future_leak",
        "MASKING_RECIPES", "masked_weights", "MaskingRecipe", "compare_masking", "masking_leak",
        "leak_claim"),
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
    "lab.recall": ("MIXERS", "N_KEYS", "N_VALUES", "RECALLED", "CLOSE", "RecallSet", "mqar_data",
        "numbers_kept", "mix", "RecallRun", "train_recall_model", "RecallTable", "compare_recall",
        "WRITE_RULES", "written_state", "state_recall", "recall_curve"),
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
        "plot_gqa_heads", "plot_window_run", "plot_window_view", "plot_ring_buffer", "plot_decode_times",
        "CACHED_COLOUR", "RECOMPUTED_COLOUR"),
    "figures.lesson13_cheaper_attention": ("plot_state_and_cache", "plot_decay_mask",
        "plot_written_state", "plot_recall_table", "RULE_STYLES"),
    "figures.lesson14_latent_and_sparse": ("plot_cache_per_token", "plot_sparse_run", "plot_sparse_cost"),
    "figures.live": ("Heatmap", "HeatmapGrid", "Bars", "LinePlot", "MatrixProduct", "ProductPanel",
        "HeadView", "RotationDials", "LiveFigure", "Access"),
    "figures.live.access": ("Access",),
    "figures.live.heads": ("HeadView", "ROW", "COLUMN"),
    "figures.live.rotations": ("RotationDials",),
    "figures.style": ("CMAP_WEIGHTS", "CMAP_VALUES", "MASK_NOTE", "tick_indices", "tick_labels",
        "colormap_table"),
    "figures.tables": ("figure_tables", "tables_html"),
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
    "explorers.lesson13_cheaper_attention": ("StateRecallExplorer", "STATE_SIZES", "PAIR_COUNTS"),
    "explorers.lesson14_latent_and_sparse": ("LatentSparseExplorer",),
    "course.environment": ("EnvironmentReport", "Component", "environment_report", "widget_check"),
    "course.feedback": ("PASSED", "FAILED", "NOT_ATTEMPTED", "Badge", "badge", "box_html", "Feedback"),
    "course.lessons": ("Lesson", "LESSONS", "Part", "PARTS", "part_of", "lessons_by_part"),
    "course.paper_guide": ("Equation", "EQUATIONS", "code_line", "code_lines", "equation_table",
        "equation_list", "paper_sizes", "ARXIV"),
    "exercises": ("Feedback", "EXERCISES", "check_street_query", "check_projection", "check_scores",
        "check_softmax", "check_scaling", "check_weighted_sum", "check_split_heads", "check_merge_heads",
        "check_next_token_head", "check_causal_weights", "check_online_update", "check_softmax_off",
        "check_rope", "check_decode_step", "check_repeat_kv", "check_rope_step",
        "check_linear_attention_step", "check_causal_linear_attention", "check_delta_step",
        "check_absorbed_scores", "check_topk_keys"),
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
    "exercises.lesson12_generation": ("check_decode_step", "check_repeat_kv", "check_rope_step"),
    "exercises.lesson13_cheaper_attention": ("check_linear_attention_step",
        "check_causal_linear_attention", "check_delta_step"),
    "exercises.lesson14_latent_and_sparse": ("check_absorbed_scores", "check_topk_keys"),
    "quizzes.concepts": ("Concept", "CONCEPTS", "concept_quiz", "record_answer", "read_record",
        "phase_score", "normalised_gain", "comparison", "comparison_text", "comparison_html"),
    "quizzes.model": ("Option", "Question"),
    "quizzes.widget": ("Quiz", "QUIZZES", "show"),
}
# exports:end

# name -> module, the first module that exports it
_WHERE: dict[str, str] = {}
for _module, _names in EXPORTS.items():
    _WHERE.update({_name: _module for _name in _names if _name not in _WHERE})

#: the library's layers, lowest first: a module imports from its own layer or a lower one (the packages of
#: the last layer may import each other); each layer says what it holds in its own docstring
LAYERS: tuple[tuple[str, ...], ...] = (("_checks", "_seal"), ("core",), ("lab",), ("figures",),
                                       ("explorers",), ("course", "exercises", "quizzes"))
#: the subpackages, each loaded on first use as ``ll.core``, ``ll.figures``, ...
_PACKAGES = tuple(name for layer in LAYERS[1:] for name in layer)

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


# What the exercise checks rely on, recorded before any notebook cell can change it (lessons_lib/_seal.py).
_seal.record_library()
_seal.record_exports(sys.modules[__name__], _WHERE)
