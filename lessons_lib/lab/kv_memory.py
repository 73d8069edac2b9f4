"""What the KV cache costs in memory, for real models: the calculator of notebook 12.

A layer keeps one key and one value of d_head numbers per key/value head for every token, so a model keeps::

    bytes = 2 × layers × n_kv_heads × d_head × tokens × batch × bytes per value

(2: keys and values). The query heads do not appear: grouped-query attention shrinks the cache by
n_heads / n_kv_heads, multi-query attention (one key/value head) by n_heads. A sliding window keeps at most
``window`` tokens, whatever the context. :func:`kv_cache_bytes` is that formula, :func:`kv_cache_memory`
applies it to a model's shape (one of :data:`PRESETS`, or any numbers) next to the memory of its weights.

The presets come from the models' published configuration files (``config.json`` on the Hugging Face hub) and
papers; each :class:`ModelShape` says where in ``source``, and lists in ``published`` numbers others have
printed for the model's cache, which ``tests/lab/test_kv_memory.py`` holds the calculator to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._checks import VALUE_BYTES, check_kv_heads, check_positive_int, check_value_type

__all__ = ["ModelShape", "Published", "PRESETS", "kv_cache_bytes", "KVMemory", "kv_cache_memory", "preset",
           "size_text", "calculated", "published_comparison"]


def size_text(n_bytes: float) -> str:
    """A memory size in decimal units with three significant digits, as the calculator shows it.

    >>> size_text(1_073_741_824), size_text(536_870_912), size_text(131_072), size_text(75_497_472)
    ('1.07 GB', '537 MB', '131 kB', '75.5 MB')
    """
    value = float(n_bytes)
    for unit in ("B", "kB", "MB", "GB"):
        if abs(value) < 999.5:
            return f"{value:.3g} {unit}"
        value /= 1000
    return f"{value:,.3g} TB" if value < 1000 else f"{value:,.0f} TB"


@dataclass(frozen=True)
class Published:
    """A number printed elsewhere about a model's KV cache, and the calculator's setting that should give it.

    ``what`` says it in words, ``source`` where it was printed; ``tokens``, ``batch`` and ``dtype`` are the
    setting; ``bytes`` the published size (None when what was published is a ratio: ``ratio`` against the
    same cache with ``ratio_tokens`` tokens and no window).
    """

    what: str
    source: str
    tokens: int
    dtype: str
    bytes: float | None = None
    batch: int = 1
    ratio: float | None = None
    ratio_tokens: int | None = None


@dataclass(frozen=True)
class ModelShape:
    """The numbers of a model that size its KV cache, and where each comes from.

    ``layers`` (num_hidden_layers), ``n_heads`` (query heads), ``n_kv_heads`` (key/value heads), ``d_head``
    (numbers per head), ``context`` (the longest sequence it was made for), ``params`` (its weights, counted),
    ``dtype`` (how it is shipped), ``window`` (a sliding window, or None).
    """

    name: str
    layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    context: int
    params: int
    dtype: str
    window: int | None = None
    source: str = ""
    published: tuple[Published, ...] = field(default_factory=tuple)

    @property
    def kind(self) -> str:
        """"multi-head", "grouped-query" or "multi-query" attention."""
        if self.n_kv_heads == self.n_heads:
            return "multi-head"
        return "multi-query" if self.n_kv_heads == 1 else "grouped-query"


#: Four models a learner meets, from their public configs. Each number's source is in ``source``.
PRESETS: dict[str, ModelShape] = {
    "GPT-2 small": ModelShape(
        "GPT-2 small", layers=12, n_heads=12, n_kv_heads=12, d_head=64, context=1024, params=124_439_808,
        dtype="float32",
        source="openai-community/gpt2 config.json: n_layer 12, n_head 12, n_embd 768 (d_head = 768 / 12), "
               "n_positions 1024; 124,439,808 parameters as transformers counts them (the paper's '117M' was "
               "recounted as 124M); shipped in float32."),
    "Llama-3-8B": ModelShape(
        "Llama-3-8B", layers=32, n_heads=32, n_kv_heads=8, d_head=128, context=8192, params=8_030_261_248,
        dtype="bfloat16",
        source="meta-llama/Meta-Llama-3-8B config.json: num_hidden_layers 32, num_attention_heads 32, "
               "num_key_value_heads 8, hidden_size 4096 (d_head = 4096 / 32), max_position_embeddings 8192, "
               "torch_dtype bfloat16; 8,030,261,248 parameters (the hub's 8.03B).",
        published=(Published("llama.cpp's KV cache for Meta-Llama-3-8B-Instruct at a 2,048-token context, "
                             "float16: 256 binary megabytes (2²⁸ bytes, 268.4 MB)",
                             "huggingface.co/dranger003/c4ai-command-r-v01-iMat.GGUF/discussions/6",
                             tokens=2048, dtype="float16", bytes=256 * 2**20),)),
    "Mistral-7B": ModelShape(
        "Mistral-7B", layers=32, n_heads=32, n_kv_heads=8, d_head=128, context=32768, params=7_241_732_096,
        dtype="bfloat16", window=4096,
        source="mistralai/Mistral-7B-v0.1 config.json: num_hidden_layers 32, num_attention_heads 32, "
               "num_key_value_heads 8, hidden_size 4096 (d_head 128), sliding_window 4096, "
               "max_position_embeddings 32768, torch_dtype bfloat16; 7,241,732,096 parameters (the hub's "
               "7.24B); Jiang et al. 2023, Table 1: window_size 4096.",
        published=(Published("Jiang et al. 2023 (Mistral 7B), section 2: on a sequence of 32k tokens the "
                             "rolling buffer cache of 4,096 tokens reduces the cache memory by 8×",
                             "arxiv.org/abs/2310.06825", tokens=32768, dtype="bfloat16", ratio=8.0,
                             ratio_tokens=32768),)),
    "Falcon-7B (multi-query)": ModelShape(
        "Falcon-7B (multi-query)", layers=32, n_heads=71, n_kv_heads=1, d_head=64, context=2048,
        params=6_921_720_704, dtype="bfloat16",
        source="tiiuae/falcon-7b config.json: num_hidden_layers 32, num_attention_heads 71, multi_query true "
               "(one key/value head), hidden_size 4544 (d_head = 4544 / 71 = 64), a 2,048-token context, "
               "torch_dtype bfloat16; 6,921,720,704 parameters counted from the config (embeddings 65,024 "
               "× 4,544 shared with the output, 32 layers of 207,070,080)."),
}


def preset(name: str) -> ModelShape:
    """The preset called ``name`` (one of :data:`PRESETS`), or an error listing them."""
    if isinstance(name, ModelShape):
        return name
    if not isinstance(name, str) or name not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(repr(n) for n in PRESETS)}; got {name!r}.")
    return PRESETS[name]


def kv_cache_bytes(layers: int, n_kv_heads: int, d_head: int, tokens: int, batch: int = 1,
                   dtype: str = "bfloat16", *, window: int | None = None) -> int:
    """2 × layers × n_kv_heads × d_head × tokens kept × batch × bytes per value: the KV cache, in bytes.

    ``tokens`` is the context; with a sliding ``window`` only min(tokens, window) are kept. ``dtype`` names
    how each number is stored: "float32" (4 bytes), "bfloat16" or "float16" (2), "float8" (1). Notebook 12.

    >>> kv_cache_bytes(32, 8, 128, 8192, dtype="bfloat16")     # Llama-3-8B, a full context: 1.07 GB
    1073741824
    """
    counts = {name: check_positive_int(value, name) for name, value in
              (("layers", layers), ("n_kv_heads", n_kv_heads), ("d_head", d_head), ("tokens", tokens),
               ("batch", batch))}
    kept = counts["tokens"] if window is None else min(counts["tokens"], check_positive_int(window, "window"))
    per_value = VALUE_BYTES[check_value_type(dtype)]
    return 2 * counts["layers"] * counts["n_kv_heads"] * counts["d_head"] * kept * counts["batch"] * per_value


@dataclass(frozen=True)
class KVMemory:
    """A model shape's KV cache at one setting, next to its weights. Sizes in bytes (decimal units in words:
    1 GB = 10⁹ bytes)."""

    shape: ModelShape
    tokens: int
    batch: int
    dtype: str
    kept: int
    bytes: int
    per_token: int
    weights_bytes: int
    multi_head_bytes: int

    @property
    def gb(self) -> float:
        return self.bytes / 1e9

    @property
    def weights_gb(self) -> float:
        return self.weights_bytes / 1e9

    @property
    def saving(self) -> float:
        """How many times smaller than the same model with one key/value head per query head."""
        return self.multi_head_bytes / self.bytes

    def formula(self) -> str:
        """The formula with this setting's numbers: ``2 × 32 layers × 8 KV heads × 128 × 8,192 tokens × 1 ×
        2 bytes = 1.07 GB``."""
        s = self.shape
        kept = f"{self.kept:,} tokens" + (f" (the window of {s.window:,})" if self.kept < self.tokens else "")
        return (f"2 × {s.layers} layers × {s.n_kv_heads} KV heads × {s.d_head} × {kept} × batch {self.batch} "
                f"× {VALUE_BYTES[self.dtype]} bytes = {size_text(self.bytes)}")

    def sentence(self) -> str:
        """The cache against the weights, in words."""
        s = self.shape
        ratio = self.bytes / self.weights_bytes
        compare = (f"{ratio:.2f} × the weights' {size_text(self.weights_bytes)}" if ratio >= 0.01
                   else f"less than 1% of the weights' {size_text(self.weights_bytes)}")
        shared = ("" if s.kind == "multi-head" else
                  f"; with one key/value head per query head it would be {self.saving:g}× larger")
        kept = (f"{size_text(self.per_token)} per token" if self.kept == self.tokens else
                f"{size_text(self.per_token)} per token × the {self.kept:,} tokens of its sliding window, "
                f"the only ones kept")
        return (f"{s.name}, {self.tokens:,} tokens × batch {self.batch} in {self.dtype}: KV cache "
                f"{size_text(self.bytes)} ({kept}), {compare}{shared}.")


def kv_cache_memory(model="Llama-3-8B", tokens: int | None = None, batch: int = 1, dtype: str | None = None,
                    *, layers: int | None = None, n_heads: int | None = None, n_kv_heads: int | None = None,
                    d_head: int | None = None, window: int | None = None,
                    params: int | None = None) -> KVMemory:
    """The KV cache of ``model`` (a preset's name or a :class:`ModelShape`) at ``tokens`` (default: its whole
    context) × ``batch`` in ``dtype`` (default: how it is shipped), and its weights in the same dtype.

    The other keywords replace the preset's numbers (``n_kv_heads=32`` turns Llama-3-8B into multi-head
    attention). Notebook 12.
    """
    base = preset(model)
    n_heads_ = check_positive_int(base.n_heads if n_heads is None else n_heads, "n_heads")
    n_kv = check_kv_heads(n_heads_, base.n_kv_heads if n_kv_heads is None else n_kv_heads)
    shape = ModelShape(
        base.name, check_positive_int(base.layers if layers is None else layers, "layers"), n_heads_, n_kv,
        check_positive_int(base.d_head if d_head is None else d_head, "d_head"), base.context,
        check_positive_int(base.params if params is None else params, "params"), base.dtype,
        base.window if window is None else check_positive_int(window, "window"), base.source, base.published)
    tokens = shape.context if tokens is None else check_positive_int(tokens, "tokens")
    batch = check_positive_int(batch, "batch")
    dtype = check_value_type(shape.dtype if dtype is None else dtype)
    size = kv_cache_bytes(shape.layers, shape.n_kv_heads, shape.d_head, tokens, batch, dtype,
                          window=shape.window)
    return KVMemory(
        shape, tokens, batch, dtype, kept=tokens if shape.window is None else min(tokens, shape.window),
        bytes=size, per_token=kv_cache_bytes(shape.layers, shape.n_kv_heads, shape.d_head, 1, 1, dtype),
        weights_bytes=shape.params * VALUE_BYTES[dtype],
        multi_head_bytes=kv_cache_bytes(shape.layers, shape.n_heads, shape.d_head, tokens, batch, dtype,
                                        window=shape.window))


def calculated(shape: ModelShape, published: Published) -> float:
    """What the calculator gives for a published number's setting: bytes, or the published ratio's (the
    cache with ``ratio_tokens`` tokens and no window, over the cache at ``tokens`` with the model's
    window)."""
    ours = kv_cache_memory(shape, published.tokens, published.batch, published.dtype).bytes
    if published.bytes is not None:
        return float(ours)
    whole = kv_cache_bytes(shape.layers, shape.n_kv_heads, shape.d_head, published.ratio_tokens,
                           published.batch, published.dtype)
    return whole / ours


def published_comparison(model) -> list[str]:
    """One line per number published for ``model`` (a preset's name or shape): what was published, where,
    and what the calculator gives for the same setting."""
    shape = preset(model)
    lines = []
    for published in shape.published:
        value = calculated(shape, published)
        ours = size_text(value) if published.bytes is not None else f"{value:g}×"
        lines.append(f"published: {published.what} ({published.source}); the calculator: {ours}")
    return lines
