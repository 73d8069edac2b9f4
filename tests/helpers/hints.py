"""What a learner reads from an exercise's check, and what the exercise's worked solution does: the two sides
of the rule that a hint nudges and never names an operation of the solution, in code or in words
(``tests/exercises/test_hints_name_no_operation.py``).

* :func:`solution_sources`: each exercise's worked solution, the code between the solution markers of its
  notebook (the same cells ``tests.helpers.solutions`` runs);
* :func:`operations`: what that code does, found in its syntax tree: every call, attribute, operator
  expression, keyword argument and subscript, as a code pattern whose variable names are free (``K.T``
  matches ``k.T``), and each operation's name (``sqrt``, ``@``, ``keepdims`` ...), which :data:`WORDS` turns
  into the words that say it in prose ("square root", "matrix product", "keep the axis" ...). Arithmetic
  on sizes (``n_heads * d_head``, ``x.shape``) is a shape, which a hint may name, not an operation; a builtin
  called by name keeps its name (``len(`` is len, not any word before a bracket); a helper the solution
  defines itself is no operation of its own, the operations in its body are;
* :func:`learner_texts`: every text a check can show for an exercise: its start hint, each mistake's
  title, explanation and every tier of its hints (evaluated on the outcomes of the mistakes' own
  candidates and of generic wrong answers, errors included), the shared mistakes of ``catalogue.py`` and
  the error explanations of ``messages.py``, and the messages of lesson 01's query check;
* :func:`named_operations`: the operations of a solution a text names.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import re
from dataclasses import dataclass

import nbformat
import numpy as np

from tests.helpers import NOTEBOOKS

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

#: the largest entry of a row or an array, said in words
_LARGEST = r"\b(?:largest|biggest|highest) (?:score|entry|entries|value|number|one)s?\b(?! \w+ (?:gets|has))"
#: How prose names each operation a solution may use: regular expressions, matched case-insensitively.
#: A solution that uses an operation missing here fails the test until its words are added.
WORDS: dict[str, tuple[str, ...]] = {
    "@": (r"@", r"matrix product", r"matrix multiplication", r"matmul", r"np\.dot", r"\bdot\(",
          r"multiply (?:the )?matri"),
    "/": (r"\bdivid", r"\bdivision\b", r"\bslash"),
    "//": (r"//", r"\bdivid", r"\bdivision\b", r"\bslash"),
    "*": (r"\bmultipl", r"\bscale (?:it|them|up)\b", r"\bscaled up\b"),
    "-": (r"\bsubtract", r"\bminus\b", r"\bshift"),
    "+": (r"\badd(?:s|ed|ing)?\b(?! up)", r"\bplus\b"),
    "negative": (r"\bnegat",),
    "==": (r"==",),
    "T": (r"\btranspos", r"ᵀ"),
    "transpose": (r"\btranspos", r"ᵀ", r"\bswap(?:s|ped|ping)? (?:the |its )?(?:two )?axes"),
    "reshape": (r"\breshap", r"\bregroup"),
    "sqrt": (r"\bsqrt", r"square root", r"√"),
    "exp": (r"\bexp\b", r"exponen", r"\be\^", r"eˢ", r"e\*\*", r"\be to the\b"),
    "max": (r"\bmax\b", r"\bmaximum", _LARGEST),
    "maximum": (r"\bmax\b", r"\bmaximum", _LARGEST, r"\bthe larger of\b"),
    "sum": (r"\.sum\(", r"np\.sum", r"\bsum of\b",
            r"\b(?:its|their|the|a|each) (?:own )?(?:row )?sums?\b(?! to)", r"\brow'?s? sums?\b(?! to)",
            r"\bsumm(?:ing|ed)\b", r"\bsum (?:over|along|each|it|them)\b",
            r"\b(?:its|their) (?:own )?totals?\b", r"\brow'?s? totals?\b", r"\bone total\b"),
    "tril": (r"\btril\b", r"lower[- ]triang", r"\bbelow the diagonal\b"),
    "triu": (r"\btriu\b", r"upper[- ]triang", r"\babove the diagonal\b"),
    "ones": (r"np\.ones", r"\bones\(", r"\b(?:matrix|array) of (?:ones|true)\b"),
    "where": (r"np\.where", r"\bwhere\("),
    "eye": (r"np\.eye", r"\beye\(", r"\bidentity\b", r"one-hot (?:vector|query|row)s? of",
            r"\be_\(?i ?\+ ?1"),
    "array": (r"np\.array",),
    "keepdims": (r"keepdims", r"\bkeep(?:s|ing)? (?:the|that|this|its|a) (?:reduced )?(?:axis|dimension)"),
    "axis": (r"\baxis ?= ?-?\d", r"\blast axis\b", r"\baxis -1\b"),
    "k": (r"\bk ?= ?-?\d", r"diagonal offset", r"\babove the diagonal\b", r"superdiagonal"),
    "dtype": (r"\bdtype ?= ?\w+",),
    "None]": (r"none\]", r"newaxis", r"new axis", r"column axis"),
    "**": (r"\*\*", r"\bpowers?\b", r"\braised? to\b", r"\^", r"\bexponents?\b"),
    "%": (r"%", r"\bmodul[oa]\b", r"\bremainders?\b"),
    "sin": (r"\bsin\b", r"\bsines?\b", r"\bsinus"),
    "cos": (r"\bcos\b", r"\bcosines?\b"),
    "arange": (r"\barange\b", r"\brange\(", r"\b(?:numbers|integers|indices) (?:from )?0 (?:to|up to|…)"),
    "asarray": (r"\basarray\b", r"\bconvert\w* (?:it |them |\w+ )?(?:in)?to an? (?:numpy )?array"),
    "concatenate": (r"concatenat", r"\bappend", r"\b[vh]stack\b", r"\bglu(?:e|es|ed|ing)\b",
                    r"(?<!\.)\bjoin(?:s|ed|ing)?\b(?!\()"),  # not a process's .join()
    "stack": (r"\bstack(?:s|ed|ing)?\b",),
    "repeat": (r"\brepeat", r"\brepetition", r"\bduplicat", r"\bcop(?:ies|ied|ying)\b",
               r"\bcopy (?:it|them|each|every)\b"),
    "len": (r"\blen\b",),
    "rope": (r"\brope\b(?!\s+(?:parts?|keys?|width)\b)", r"\brotary\b"),   # "the rope part" names an input
    "outer": (r"\bouter\b", r"np\.outer", r"\bcolumn times (?:a |the )?row\b"),
    "ValueError": (r"\bValueError\(", r"\braises? (?:a |an )?(?:clear )?ValueError\b", r"\bthrows?\b"),
    "zeros": (r"np\.zeros", r"\bzeros\(", r"\b(?:array|matrix) of (?:zeros|false)\b"),
    "argsort": (r"\bargsort", r"\bsort(?:s|ed|ing)?\b"),
    "range": (r"\brange\(",),
}

_OPERATOR_NAMES = {ast.MatMult: "@", ast.Div: "/", ast.FloorDiv: "//", ast.Mult: "*", ast.Sub: "-",
                   ast.Add: "+", ast.Pow: "**", ast.Mod: "%"}


# ------------------------------------------------------------------------------------ the worked solutions
def _solution_regions(source: str) -> str:
    lines, inside = [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            inside = True
        elif stripped.startswith(END):
            inside = False
        elif inside:
            lines.append(line)
    return "\n".join(lines)


def solution_sources() -> dict[str, str]:
    """``{"my_softmax": "shifted = x - x.max(...)\\n..."}``: every exercise's worked solution (its code
    between the markers, dedented), by the name the learner defines or assigns."""
    found: dict[str, str] = {}
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or BEGIN not in cell.source:
                continue
            tree = ast.parse(cell.source)
            names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
            if names:  # each function's own region
                for node in tree.body:
                    if isinstance(node, ast.FunctionDef) and node.name.startswith("my_"):
                        body = "\n".join(cell.source.splitlines()[node.lineno - 1:node.end_lineno])
                        found[node.name] = _dedent(_solution_regions(body))
            else:  # a value to design: the names the region assigns
                region = _solution_regions(cell.source)
                for node in ast.parse(_dedent(region)).body:
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if isinstance(target, ast.Name) and target.id.startswith("my_"):
                                found[target.id] = _dedent(region)
    return found


def _dedent(code: str) -> str:
    import textwrap

    return textwrap.dedent(code)


# ------------------------------------------------------------------------------------ what a solution does
@dataclass(frozen=True)
class Operation:
    """One operation of a solution: its name (a key of :data:`WORDS`) and, when it is code, the code it is
    (``K.T``) as tokens with the variable names free."""

    name: str
    code: str
    tokens: tuple[str, ...]


def code_tokens(text: str, keep: frozenset[str] = frozenset()) -> list[str]:
    """Code (or prose quoting code, or math) as tokens: a variable name becomes NAME, the names of
    attributes, methods and of numpy's functions stay, Python's keywords and numbers stay, and so do the
    names in ``keep`` (the builtins a solution calls by name: ``len(`` is len, not any word before a
    bracket); the notation of the lessons is read as code (Q·Kᵀ as ``Q @ K.T``, − as -)."""
    text = (text.replace("−", "-").replace("·", " @ ").replace("ᵀ", ".T").replace("√", " sqrt ")
            .replace("“", '"').replace("”", '"'))
    text = re.sub(r"\.(?=\s|$)", " ; ", text)  # a full stop ends a sentence: it is not an attribute's dot
    text = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", "_", text)  # a hyphenated word ("row-wise") is one word
    text = re.sub(r"(^|[\s(\[,=])-(?=[\w(])", r"\1 u- ", text)  # a sign (-inf, -m), not a subtraction
    raw = re.findall(r"u-|[A-Za-z_]\w*|\d+(?:\.\d*)?|\*\*|//|==|!=|<=|>=|\S", text)
    out: list[str] = []
    for token in raw:
        if token != "u-" and re.match(r"[A-Za-z_]", token) and not keyword.iskeyword(token):
            attribute = bool(out) and out[-1] == "."
            out.append(token if attribute or token in ("np", "numpy") or token in keep else "NAME")
        else:
            out.append(token)
    return out


def _size_names(tree: ast.AST) -> set[str]:
    """Names that hold sizes: those unpacked from ``.shape``, and parameters that count things."""
    sizes = {"seq_len", "n_heads", "d_k", "d_head", "d_model", "L", "S", "n"}
    for node in ast.walk(tree):
        from_shape = isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute)
        if from_shape and node.value.attr == "shape":
            for target in node.targets:
                for element in getattr(target, "elts", [target]):
                    if isinstance(element, ast.Name):
                        sizes.add(element.id)
    return sizes


def _is_size(node: ast.AST, sizes: set[str]) -> bool:
    """Arithmetic on sizes (``n_heads * d_head``), a size, or an array's ``.shape``: a shape, not an
    operation on the arrays."""
    if isinstance(node, ast.Name):
        return node.id in sizes
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, ast.Attribute):
        return node.attr == "shape"
    if isinstance(node, ast.BinOp):
        return _is_size(node.left, sizes) and _is_size(node.right, sizes)
    return False


def _called_builtins(tree: ast.AST) -> frozenset[str]:
    """The builtins ``tree`` calls by name (``len``, ``ValueError``): each is matched by its own name."""
    return frozenset(node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call)
                     and isinstance(node.func, ast.Name) and hasattr(builtins, node.func.id))


def _own_functions(tree: ast.AST) -> set[str]:
    """The functions a solution defines itself (a helper it calls on Q and on K): a call of one is not an
    operation of its own; the operations inside its body are listed like every other."""
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def operations(code: str) -> list[Operation]:
    """Every operation of ``code`` (a solution): see the module's docstring."""
    return list(_operations(code))


@functools.cache  # a solution's operations, once: the checks' thousands of texts are read against a dozen
def _operations(code: str) -> tuple[Operation, ...]:
    tree = ast.parse(code)
    sizes, keep, own = _size_names(tree), _called_builtins(tree), _own_functions(tree)
    found: dict[tuple, Operation] = {}

    def add(name: str, snippet: str) -> None:
        tokens = tuple(code_tokens(snippet, keep))
        found.setdefault((name, tokens), Operation(name, snippet, tokens))

    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or _is_size(node, sizes):
            continue
        snippet = ast.unparse(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in own:
            continue
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "call")
            add(name, snippet)
            add(name, ast.unparse(func) + "(")                 # the call itself, whatever its arguments
            if isinstance(func, ast.Attribute):
                add(name, f".{func.attr}(")
            for kw in node.keywords:
                add(kw.arg, f"{kw.arg}={ast.unparse(kw.value)}")
        elif isinstance(node, ast.Attribute) and node.attr != "shape":
            numpy_name = isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy")
            if node.attr in WORDS or not numpy_name:
                add(node.attr, snippet)
                add(node.attr, f".{node.attr}")
        elif isinstance(node, ast.BinOp):
            add(_OPERATOR_NAMES.get(type(node.op), "operator"), snippet)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(
                node.operand, ast.Constant):
            add("negative", snippet)
        elif isinstance(node, ast.Compare):
            add("==", snippet)
        elif isinstance(node, ast.Subscript):
            add("None]" if "None" in ast.unparse(node.slice) else "subscript", snippet)
    return tuple(found.values())


def unnamed_operations(code: str) -> set[str]:
    """Operations of ``code`` that :data:`WORDS` has no words for."""
    return {op.name for op in operations(code)} - set(WORDS) - {"call", "subscript", "operator"}


def named_operations(text: str, code: str) -> list[str]:
    """The operations of the solution ``code`` that ``text`` names, in code or in words."""
    return list(_named_operations(text, code))


@functools.cache  # a check says the same text for many wrong answers: each (text, solution) is read once
def _named_operations(text: str, code: str) -> tuple[str, ...]:
    tokens = code_tokens(text, _called_builtins(ast.parse(code)))
    named = []
    for op in _operations(code):
        n = len(op.tokens)
        if n and any(tuple(tokens[i:i + n]) == op.tokens for i in range(len(tokens) - n + 1)):
            named.append(f"`{op.code}`")
    lowered = text.lower().replace("−", "-")
    for name in sorted({op.name for op in _operations(code)} & set(WORDS)):
        for pattern in WORDS[name]:
            if match := re.search(pattern, lowered, re.IGNORECASE):
                named.append(f"{name} (in words: {match.group(0)!r})")
                break
    return tuple(named)


# ------------------------------------------------------------------------------------ what a learner reads
def _error_outcomes(case) -> list:
    """Outcomes of the errors a learner's function may raise, each a real exception of its kind."""
    from lessons_lib.exercises.outcome import Outcome

    errors = []
    for make in (lambda: np.ones((2, 3)) @ np.ones((2, 3)), lambda: np.ones((2, 3)) * np.ones((3, 2)),
                 lambda: np.ones(3).sum(axis=2), lambda: undefined_name,  # noqa: F821
                 lambda: [].nothing, lambda: len(5), lambda: float("x"), lambda: 1 / 0):
        try:
            make()
        except Exception as exc:  # the exception itself is the point
            errors.append(exc)
    errors += [NotImplementedError("your code here"), RecursionError("maximum recursion depth exceeded"),
               OverflowError("math range error")]
    return [Outcome(case, error=e, line="") for e in errors]


def _wrong_answers() -> list:
    return [lambda *a: None, lambda *a: [1.0], lambda *a: (np.ones(2),), lambda *a: 1 / 0,
            lambda *a: np.ones(3, dtype=complex), lambda *a: "text", lambda *a: (x for x in a),
            lambda *a: tuple(np.asarray(v) for v in a),
            lambda *a: a[0] * 0.5 if hasattr(a[0], "shape") else 1.0]


def learner_texts(exercise) -> list[tuple[str, str]]:
    """``(label, text)`` of everything the check of ``exercise`` can say when it does not pass: see the
    module's docstring. Feedback that quotes the learner's own line leaves it out (it is theirs)."""
    from lessons_lib.exercises import catalogue, messages, runner
    from lessons_lib.exercises.outcome import Outcome

    texts = [("start hint", exercise.start_hint), ("not attempted", exercise._not_attempted().message)]
    pool = []
    candidates = [c for m in exercise.mistakes for t in getattr(m.test, "tests", (m.test,))
                  for c in getattr(t, "candidates", ())]
    for fn in [*candidates, *_wrong_answers()]:
        feedback = exercise.check(fn)
        text = _without_the_learners_words(f"{feedback.message} {feedback.hint}", fn, exercise.cases()[0])
        texts.append((f"feedback {feedback.mistake}", text))
        for case in exercise.cases():
            outcome = runner.run(fn, case, exercise.reference(*case.args.values()),
                                 answer_kind=exercise.answer_kind, outputs=exercise.outputs)
            outcome.line = ""
            pool.append(outcome)
    case = exercise.cases()[0]
    expected = exercise.reference(*case.args.values())
    for outcome in _error_outcomes(case):
        outcome.expected = expected
        pool.append(outcome)
    pool += [Outcome(case, expected=expected, timed_out=True, time_limit=3.0, still_running=still)
             for still in (False, True)]
    pool += [Outcome(case, expected=expected, tampered=("numpy.allclose",)),
             Outcome(case, expected=expected, borrowed=("ll.softmax",))]
    shared = (*catalogue.TYPE_MISTAKES, *catalogue.FALLBACK_MISTAKES, catalogue.TAMPERED,
              catalogue.LIBRARY_ANSWER)
    for mistake in (*exercise.mistakes, *shared):
        texts.append((f"{mistake.key} title", mistake.title))
        hints = mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)
        parts = (("explain", mistake.explain), *((f"hint {i + 1}", h) for i, h in enumerate(hints)))
        for label, part in parts:
            if not callable(part):
                texts.append((f"{mistake.key} {label}", part))
                continue
            for outcome in pool:
                try:
                    text = part(outcome)
                except Exception:  # not this mistake's kind of outcome
                    continue
                if outcome.error is not None and str(outcome.error):
                    text = text.replace(str(outcome.error), "<Python's message>")
                texts.append((f"{mistake.key} {label}", text))
    for _, _, hint in messages.ERRORS:
        texts.append(("error hint", hint))
    for outcome in pool:
        if outcome.error is not None:
            texts.append(("error explanation",
                          messages.explain_error(outcome).replace(str(outcome.error), "<Python's message>")))
    return texts


def _without_the_learners_words(text: str, fn, case) -> str:
    """``text`` without what is the learner's own, not the course's: the lines of their function it quotes
    (the line an error happened on) and Python's message of the exception their function raised."""
    import inspect

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = ""
    for line in source.splitlines():
        if line.strip():
            text = text.replace(line.strip(), "<your line>")
    try:
        fn(*case.args.values())
    except Exception as exc:  # the learner's own exception: its message is Python's, not the course's
        if str(exc):
            text = text.replace(str(exc), "<Python's message>")
    return text


def query_texts() -> list[tuple[str, str]]:
    """What lesson 01's check of ``my_query`` (a value, not a function) can say."""
    from lessons_lib.exercises import check_street_query

    texts = []
    for query in ([0, 8, 0, 0], [0, 0, 0, 0], "place", [0, 8, 0], [8, 0, 0, 0], [3, 3, 0, 0], [0, 4, 0, 0],
                  [0, 0, 0, 3], [1, 1, 1, 1], [0, -3, 0, 0], [np.inf, 0, 0, 0], [0, 1, 0, 0], [0, 2, 0, 1]):
        feedback = check_street_query(query)
        if not feedback.passed:
            texts.append((f"feedback {feedback.mistake}", f"{feedback.message} {feedback.hint}"))
    return texts
