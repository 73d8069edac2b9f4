"""The layout of lessons_lib is its architecture: layers, lesson names, no private imports, no import circle.

* Imports flow one way: ``core`` ← ``lab`` ← ``figures`` ← ``explorers`` ← ``course``/``exercises``/
  ``quizzes`` (``_checks`` and ``_seal`` lie under them all); a module imports from its own layer or
  lower ones.
* No import circle in the library or in tools/, counting the imports inside functions: a shared piece
  lives below both of its users.
* A lesson's parts carry its notebook's name: ``lesson07_causal_masking`` is the stills, the explorer,
  the exercise and the quiz of ``notebooks/07_causal_masking.ipynb``.
* No module, test or tool imports a private ``_name`` of another module (nor reaches one as
  ``module._name``), and no test or tool imports a test module (``tests/**/test_*.py``, ``conftest.py``):
  shared pieces are public names of a base module, or of ``tests/helpers/``.

The checks read the source (``ast``), so they import nothing.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from lessons_lib import LAYERS
from tests.helpers import REPO, load_tool

PACKAGE = REPO / "lessons_lib"
TOOLS = REPO / "tools"
TESTS = REPO / "tests"
HELPERS = TESTS / "helpers"
#: layer -> its rank, lowest first (lessons_lib.LAYERS: the packages of one layer share a rank)
LAYER = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}
#: folders whose modules, besides their shared pieces, are one per lesson
PER_LESSON = {"figures": {"base", "style", "attention_maps", "tables"}, "explorers": {"base"},
              "exercises": {"engine", "runner", "outcome", "child", "processes", "wire", "watch", "mistakes",
                            "messages", "catalogue", "grading", "judge", "autograde", "sandbox"},
              "quizzes": {"model", "widget", "concepts"}}
LESSON = re.compile(r"^lesson(\d\d)_[a-z0-9_]+$")


# ------------------------------------------------------------------ the modules and their imports
def module_files(package: Path = PACKAGE, tools: Path = TOOLS, tests: Path = TESTS) -> dict[str, Path]:
    """Every module by the name it is imported as: the library's (``lessons_lib.core.masks``), the
    tests' (``tests.helpers.links``) and the tools' (``stamp_notebooks``: tools/ is on ``sys.path`` when a
    tool runs, and ``tests.helpers.load_tool`` puts it there)."""
    files = {}
    for root in (package, tests):
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join((root.name, *(parts[:-1] if parts[-1] == "__init__" else parts)))] = path
    files |= {path.stem: path for path in sorted(tools.glob("*.py"))}
    return files


FILES = module_files()
#: lessons_lib's modules by their name inside the package ("core.attention"; "" is the package itself)
MODULES = {name.removeprefix("lessons_lib").lstrip("."): path for name, path in FILES.items()
           if name == "lessons_lib" or name.startswith("lessons_lib.")}


@functools.cache
def syntax_nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a source file's syntax tree, parsed and walked once for every check that reads it."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def _known(dotted: str, files: dict[str, Path]) -> str | None:
    """The module ``dotted`` names, or the module it lies in (``a.b.c`` -> ``a.b``); None outside ours."""
    parts = dotted.split(".")
    return next((".".join(parts[:cut]) for cut in range(len(parts), 0, -1) if ".".join(parts[:cut]) in files),
                None)


def imports(name: str, files: dict[str, Path] = FILES):
    """``(line, module, name)`` for every import of one of our modules by module ``name``, at any depth
    (inside a function, under ``if TYPE_CHECKING``): ``name`` is the imported name when it is not a
    module itself (``from .engine import Case``), else None. A test's ``load_tool("x")`` imports tool x."""
    path = files[name]
    here = name.split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    for node in syntax_nodes(path):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, target, None) for alias in node.names
                        if (target := _known(alias.name, files)))
        elif isinstance(node, ast.ImportFrom):
            inside = package[: len(package) - (node.level - 1)] + ([node.module] if node.module else [])
            base = ".".join(inside) if node.level else node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in files:      # "from . import attention": the module itself
                    yield node.lineno, f"{base}.{alias.name}", None
                elif base in files:
                    yield node.lineno, base, alias.name
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "load_tool" and node.args
              and isinstance(node.args[0], ast.Constant) and node.args[0].value in files):
            yield node.lineno, node.args[0].value, None


def import_graph(files: dict[str, Path] = FILES) -> dict[str, set[str]]:
    """module -> the modules it imports (ours only)."""
    return {name: {target for _, target, _ in imports(name, files) if target != name} for name in files}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle a depth-first walk of ``graph`` closes, each as its modules in import order, the first
    again at the end (``[a, b, a]``)."""
    circles, state, path = [], {}, []

    def walk(node):
        state[node] = "on the path"
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "on the path":
                circles.append(path[path.index(target):] + [target])
            elif target not in state:
                walk(target)
        path.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            walk(node)
    return circles


def _imports(name: str):
    """(line, imported module, imported name) for every lessons_lib import of a library module, at any
    depth, the modules named inside the package (``core.masks``)."""
    for line, target, imported in imports(f"lessons_lib.{name}".rstrip(".")):
        if target == "lessons_lib" or target.startswith("lessons_lib."):
            yield line, target.removeprefix("lessons_lib").lstrip("."), imported


def _is_private(name: str) -> bool:
    """``_name``, not ``__dunder__`` nor a protocol's ``_sunder_`` (IPython's ``_repr_html_``)."""
    return name.startswith("_") and not name.startswith("__") and not (name.endswith("_") and len(name) > 2)


def _bound_modules(name: str, files: dict[str, Path] = FILES) -> dict[str, str]:
    """The local names module ``name`` binds to one of our modules: ``import lessons_lib as ll``, ``from
    ..core import masks``, ``lr = load_tool("learner_release")``."""
    bound = {}
    for node in syntax_nodes(files[name]):
        if isinstance(node, ast.Import):
            for alias in node.names:                    # import a.b binds a; import a.b as c binds c
                if _known(alias.name, files) == alias.name:
                    module = alias.name if alias.asname else alias.name.split(".")[0]
                    bound[alias.asname or module] = module
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and _loaded_tool(node.value, files)):
            bound[node.targets[0].id] = _loaded_tool(node.value, files)
    by_line = {}
    for line, target, imported in imports(name, files):
        if imported is None:
            by_line.setdefault(line, []).append(target)
    for node in syntax_nodes(files[name]):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                module = next((m for m in by_line.get(node.lineno, []) if m.rsplit(".", 1)[-1] == alias.name),
                              None)
                if module:
                    bound[alias.asname or alias.name] = module
    return bound


def _loaded_tool(node, files: dict[str, Path] = FILES) -> str | None:
    """The tool a ``load_tool("name")`` call loads, or None for any other expression."""
    if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "load_tool" and node.args
            and isinstance(node.args[0], ast.Constant) and node.args[0].value in files):
        return node.args[0].value
    return None


def private_reaches(name: str, files: dict[str, Path] = FILES) -> list[str]:
    """Where module ``name`` takes another module's private name: ``from x import _y``, ``x._y``,
    ``load_tool("t")._y``, ``monkeypatch.setattr(x, "_y", ...)``."""
    found = [f"line {line}: from {target} import {imported}"
             for line, target, imported in imports(name, files)
             if imported and _is_private(imported) and target != name]
    bound = _bound_modules(name, files)

    def module_of(node):
        return bound.get(node.id) if isinstance(node, ast.Name) else _loaded_tool(node, files)

    for node in syntax_nodes(files[name]):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            module, attr = module_of(node.value), node.attr
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setattr"
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str)
              and _is_private(node.args[1].value)):
            module, attr = module_of(node.args[0]), node.args[1].value
        else:
            continue
        if module and module != name and f"{module}.{attr}" not in files:   # a module of ours is public
            found.append(f"line {node.lineno}: {module}.{attr}")
    return found


def _layer(module: str) -> int | None:
    return LAYER.get(module.split(".")[0]) if module else None


def test_every_module_lies_in_a_layer():
    loose = [m for m in MODULES if m and _layer(m) is None]
    assert not loose, f"modules outside the layers {sorted(LAYER)}: {loose}"


@pytest.mark.parametrize("name", [m for m in MODULES if m])
def test_imports_flow_one_way(name):
    upward = [f"line {line}: {target}" for line, target, _ in _imports(name)
              if target and _layer(target) is not None and _layer(target) > _layer(name)]
    assert not upward, (f"lessons_lib.{name} (layer {name.split('.')[0]}) imports from a higher layer: "
                        f"{upward}. Move the shared piece down, or the importer up.")


#: tests that play a learner's attack on the judge: rebinding its private names is what they hold the seal to
ATTACKS_ON_PRIVATE_NAMES = {"tests.exercises.test_the_seal_holds_for_any_object"}


def test_no_module_test_or_tool_reaches_a_private_name_of_another():
    private = {name: found for name in FILES if name not in ATTACKS_ON_PRIVATE_NAMES
               and (found := private_reaches(name))}
    assert not private, (f"these use private names of other modules: {private}; make the shared piece a "
                         f"public name of its base module (tests: of tests/helpers/).")


def test_no_test_or_tool_imports_a_test_module():
    """Shared test code lives in tests/helpers/; ``conftest.py`` is pytest's, never imported."""
    importing = {name: sorted({target for _, target, _ in imports(name) if target != name
                               and re.search(r"(^|\.)(test_\w+|conftest)$", target)})
                 for name in FILES if not name.startswith("lessons_lib")}
    importing = {name: targets for name, targets in importing.items() if targets}
    assert not importing, f"these import test modules: {importing}; move what they share to tests/helpers/."


#: the most lines a file of the tests may hold: past it, a file holds more than one behaviour
MAX_TEST_LINES = 600


def test_no_file_of_the_tests_is_over_600_lines():
    long = {str(p.relative_to(REPO)): n for p in TESTS.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_TEST_LINES}
    assert not long, f"split these by the behaviour they hold (at most {MAX_TEST_LINES} lines): {long}"


def test_the_library_and_the_tools_import_in_no_circle():
    """Counting the imports inside functions: a circle hidden in one is still a circle."""
    circles = [" → ".join(circle) for circle in import_circles(import_graph())]
    assert not circles, (f"import circles: {circles}. Move the piece both sides share down, to a module both "
                         f"can import.")


def test_the_import_graph_sees_an_import_inside_a_function_and_names_its_circle(tmp_path):
    """The graph behind the two tests above, on a package whose one circle hides in a function."""
    (tmp_path / "lessons_lib").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "lessons_lib" / "__init__.py").write_text("")
    (tmp_path / "lessons_lib" / "a.py").write_text("from .b import shared\n")
    (tmp_path / "lessons_lib" / "b.py").write_text("def shared():\n    from . import a\n    return a\n")
    (tmp_path / "tools" / "one.py").write_text("import two\n")
    (tmp_path / "tools" / "two.py").write_text("X = 1\n")
    (tmp_path / "tests" / "test_x.py").write_text(
        "from lessons_lib.a import _hidden\nfrom tests import test_y\none = load_tool('one')\none._X = 2\n")
    (tmp_path / "tests" / "test_y.py").write_text("")
    files = module_files(tmp_path / "lessons_lib", tmp_path / "tools", tmp_path / "tests")
    graph = import_graph(files)
    assert graph["one"] == {"two"} and graph["tests.test_x"] == {"lessons_lib.a", "tests.test_y", "one"}
    assert import_circles(graph) == [["lessons_lib.a", "lessons_lib.b", "lessons_lib.a"]]
    assert private_reaches("tests.test_x", files) == ["line 1: from lessons_lib.a import _hidden",
                                                      "line 4: one._X"]


def _lesson_names() -> dict[str, dict[str, str]]:
    """lesson number -> {folder: module name} over the per-lesson folders."""
    names: dict[str, dict[str, str]] = {}
    for folder, shared in PER_LESSON.items():
        for path in sorted((PACKAGE / folder).glob("*.py")):
            if path.stem == "__init__" or path.stem in shared:
                continue
            match = LESSON.match(path.stem)
            assert match, (f"lessons_lib/{folder}/{path.name} is neither a shared piece {sorted(shared)} "
                           f"nor a lesson module lessonNN_name.py")
            names.setdefault(match[1], {})[folder] = path.stem
    return names


def test_a_lessons_parts_share_its_notebooks_name():
    """``lesson07_causal_masking`` is each part of notebooks/07_causal_masking.ipynb: one search finds all."""
    names = _lesson_names()
    notebooks = {p.stem[:2]: p.stem for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    for number, by_folder in names.items():
        assert number in notebooks, f"lesson{number}_* has no notebook notebooks/{number}_*.ipynb"
        wrong = {folder: name for folder, name in by_folder.items() if name != f"lesson{notebooks[number]}"}
        assert not wrong, (f"lesson {number}'s notebook is notebooks/{notebooks[number]}.ipynb, so each of "
                           f"its parts is lesson{notebooks[number]}.py; rename (git mv) {wrong}")


def test_every_folder_of_the_library_is_a_layer():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("_*.py") if p.stem != "__init__"}  # _checks, _seal
    assert set(LAYER) == folders | modules, (f"lessons_lib.LAYERS holds {sorted(LAYER)}; the tree: "
                                                 f"{sorted(folders)}")


@pytest.mark.parametrize("shown_in", ["README.md", "CONTRIBUTING.md", "lessons_lib/__init__.py"])
def test_the_table_of_layers_is_the_layers_own_words_wherever_it_is_shown(shown_in):
    """One table: each layer's row is the first paragraph of its own docstring; the README, CONTRIBUTING
    and the package's docstring show copies that tools/layer_table.py writes."""
    layer_table = load_tool("layer_table")
    assert shown_in in layer_table.SHOWN_IN
    assert layer_table.written(shown_in) == layer_table.table_for(shown_in), (
        f"{shown_in}'s table of layers differs from the layers' docstrings: change the docstring of the "
        f"layer (its first paragraph), then run python tools/layer_table.py --write")


@pytest.mark.parametrize("layer", list(LAYER))
def test_a_layers_description_names_every_module_of_its_folder(layer):
    """So the table says where everything is: ``masks``, ``live/``, ``lessonNN_name.py`` for the lessons."""
    folder = PACKAGE / layer
    if not folder.is_dir():
        return
    text = load_tool("layer_table").description(layer)
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__" and not LESSON.match(p.stem)}
    modules |= {p.name + "/" for p in folder.iterdir() if (p / "__init__.py").exists()}
    missing = sorted(m for m in modules if f"``{m}``" not in text)
    if any(LESSON.match(p.stem) for p in folder.glob("*.py")) and "``lessonNN_name.py``" not in text:
        missing.append("lessonNN_name.py")
    assert not missing, (f"lessons_lib/{layer}/__init__.py's first paragraph, the layer's row in the table "
                         f"of layers, does not name {missing}")


def test_contributings_map_names_every_tool_and_the_recipe_every_file():
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    tools_row = next(line for line in text.splitlines() if line.startswith("| `tools/`"))
    missing = [p.name for p in sorted((REPO / "tools").glob("*.py")) if f"`{p.name}`" not in tools_row]
    assert not missing, f"CONTRIBUTING.md's tools row does not name {missing}"
    for lesson in ("figures", "explorers", "exercises", "quizzes"):
        assert f"lessons_lib/{lesson}/lesson13_sparse.py" in text, f"the lesson recipe has no {lesson} file"


def test_the_exercises_docstring_lists_every_check():
    from lessons_lib import exercises

    checks = [name for name in exercises.__all__ if name.startswith("check_")]
    missing = [name for name in checks if f"``{name}``" not in exercises.__doc__]
    assert not missing, f"lessons_lib/exercises/__init__.py's table does not list {missing}"


def test_the_explorers_table_lists_every_explorer_with_its_notebook():
    import importlib

    from lessons_lib.explorers import base

    listed = dict(re.findall(r"^:class:`(\w+)`\s+(\d\d)\s", base.__doc__, re.M))
    found = {}
    for path in sorted((PACKAGE / "explorers").glob("lesson*.py")):
        module = importlib.import_module(f"lessons_lib.explorers.{path.stem}")
        classes = {name: getattr(module, name) for name in module.__all__}
        found |= {name: path.stem[6:8] for name, cls in classes.items()
                  if isinstance(cls, type) and issubclass(cls, base.ExplorerBase)}
    assert listed == found, f"explorers/base.py's table lists {listed}; the lesson modules define {found}"


def _prose(path: Path) -> str:
    """The text of a file that names things for a reader: a Python file's docstrings and comments, a
    notebook's Markdown and code comments, a document's whole text."""
    import io
    import json
    import tokenize

    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        parts = []
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            text = "".join(cell["source"])
            parts += [text] if cell["cell_type"] == "markdown" else [
                line.split("#", 1)[1] for line in text.splitlines() if "#" in line]
        return "\n".join(parts)
    source = path.read_text(encoding="utf-8")
    docs = [ast.get_docstring(node) or "" for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    comments = [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                if tok.type == tokenize.COMMENT]
    return "\n".join(docs + comments)


def _resolves(dotted: str) -> bool:
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_every_lessons_lib_path_named_in_a_docstring_comment_or_doc_imports():
    """``lessons_lib.core.masks.padding_mask`` in a docstring, a comment, a notebook or a document is a
    map a reader follows: each one must lead somewhere (a module moved leaves none behind)."""
    files = [*PACKAGE.rglob("*.py"), *(REPO / "tools").glob("*.py"), *(REPO / "tests").rglob("*.py"),
             *(REPO / "benchmarks").glob("*.py"), *(REPO / "notebooks").glob("*.ipynb"),
             *(REPO / "docs").glob("*.md"), REPO / "README.md", REPO / "CONTRIBUTING.md"]
    stale = {}
    for path in files:
        for dotted in set(re.findall(r"\blessons_lib(?:\.[A-Za-z_]\w*)+", _prose(path))):
            if not _resolves(dotted):
                stale.setdefault(dotted, []).append(str(path.relative_to(REPO)))
    assert not stale, f"these lessons_lib paths lead nowhere (moved or renamed?): {stale}"


@pytest.mark.parametrize("name", [m for m in MODULES if m])
def test_a_module_says_its_public_names_once(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    lines = [node.lineno for node in tree.body if isinstance(node, ast.Assign)
             and any(isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets)]
    assert len(lines) <= 1, f"lessons_lib.{name} assigns __all__ on lines {lines}: say it once, at the top"


def test_a_lesson_modules_section_headers_name_its_own_lesson():
    """A header such as ``# ==== notebook 07: masks`` belongs in lesson 07's module (left from a split, it
    sends a reader to the wrong file)."""
    wrong = []
    for folder in PER_LESSON:
        for path in sorted((PACKAGE / folder).glob("lesson*.py")):
            for number, line in re.findall(r"^# [-=]{5,} (?:notebook|lesson) (\d\d)\b(.*)$",
                                           path.read_text(encoding="utf-8"), re.M):
                if number != path.stem[6:8]:
                    wrong.append(f"{folder}/{path.name}: notebook {number}{line}")
    assert not wrong, f"section headers of another lesson: {wrong}"


def test_the_tests_load_a_tool_one_way():
    """``tests.helpers.load_tool("name")``: tools/ on sys.path as when the script runs, one module per tool (a
    Python started by a test may still set its own path, in the code it is given)."""
    another_way = re.compile(r"(sys\.path\.insert|\S*spec_from_file_location)\(.*tools", re.S)
    other_ways = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        names = ("insert", "spec_from_file_location")
        calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
                 and getattr(node.func, "attr", getattr(node.func, "id", "")) in names]
        other_ways += [f"{path.relative_to(REPO)}, line {call.lineno}" for call in calls
                       if path != HELPERS / "__init__.py"
                       and another_way.match(ast.get_source_segment(source, call))]
    assert not other_ways, f"load tools with tests.helpers.load_tool instead: {other_ways}"
