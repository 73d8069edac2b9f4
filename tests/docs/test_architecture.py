"""The layout of lessons_lib is its architecture: layers, lesson names, no private imports.

* Imports flow one way: ``core`` ← ``lab`` ← ``figures`` ← ``explorers`` ← ``course``/``exercises``/
  ``quizzes`` (``_checks`` lies under them all); a module imports from its own layer or lower ones.
* A lesson's parts carry its notebook's name: ``lesson07_causal_masking`` is the stills, the explorer,
  the exercise and the quiz of ``notebooks/07_causal_masking.ipynb``.
* No module imports a private ``_name`` of another module (nor reaches one as ``module._name``):
  shared pieces are public names of a base module.

The checks read the source (``ast``), so they import nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers import REPO

PACKAGE = REPO / "lessons_lib"
HELPERS = REPO / "tests" / "helpers"
LAYER = {"_checks": 0, "core": 1, "lab": 2, "figures": 3, "explorers": 4, "course": 5, "exercises": 5,
         "quizzes": 5}
#: folders whose modules, besides their shared pieces, are one per lesson
PER_LESSON = {"figures": {"base", "style", "attention_maps"}, "explorers": {"base"},
              "exercises": {"engine", "runner", "mistakes", "messages", "catalogue", "grading", "integrity"},
              "quizzes": {"model", "widget", "concepts"}}
LESSON = re.compile(r"^lesson(\d\d)_[a-z0-9_]+$")


def _modules() -> dict[str, Path]:
    """dotted name under lessons_lib ("core.attention", "figures.live") -> its file."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path):
    """(line, imported module, imported names) for every lessons_lib import of a module, at any depth."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if name else []
    package = here if is_package else here[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + (node.module.split(".") if node.module else []))
            elif node.module and node.module.startswith("lessons_lib"):
                target = node.module.removeprefix("lessons_lib").lstrip(".")
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                if sub in MODULES:  # "from . import attention": the module itself
                    yield node.lineno, sub, None
                else:
                    yield node.lineno, target, alias.name


def _layer(module: str) -> int | None:
    return LAYER.get(module.split(".")[0]) if module else None


def test_every_module_lies_in_a_layer():
    loose = [m for m in MODULES if m and _layer(m) is None]
    assert not loose, f"modules outside the layers {sorted(LAYER)}: {loose}"


@pytest.mark.parametrize("name", [m for m in MODULES if m])
def test_imports_flow_one_way(name):
    upward = [f"line {line}: {target}" for line, target, _ in _imports(name, MODULES[name])
              if target and _layer(target) is not None and _layer(target) > _layer(name)]
    assert not upward, (f"lessons_lib.{name} (layer {name.split('.')[0]}) imports from a higher layer: "
                        f"{upward}. Move the shared piece down, or the importer up.")


@pytest.mark.parametrize("name", list(MODULES))
def test_no_module_imports_a_private_name(name):
    path = MODULES[name]
    private = [f"line {line}: {target}.{imported}" for line, target, imported in _imports(name, path)
               if imported and imported.startswith("_") and not imported.startswith("__")]
    modules = {alias.asname or alias.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ImportFrom) for alias in node.names
               if any(m == alias.name or m.endswith("." + alias.name) for m in MODULES)}
    private += [f"line {node.lineno}: {node.value.id}.{node.attr}"
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and node.attr.startswith("_") and not node.attr.startswith("__")]
    assert not private, (f"lessons_lib.{name or '__init__'} uses private names of other modules: {private}; "
                         f"make the shared piece a public name of its base module.")


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


def test_the_folder_table_of_the_package_docstring_names_every_folder():
    import lessons_lib

    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    listed = set(re.findall(r"^``(\w+)/``", lessons_lib.__doc__, re.M))
    assert listed == folders, f"the docstring lists {sorted(listed)}; the folders: {sorted(folders)}"


def test_contributings_map_names_every_folder_and_tool():
    """CONTRIBUTING.md's map has a row per folder of lessons_lib and names every tool."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `lessons_lib/([\w.]+/?)`", text, re.M))
    tree = {p.name + "/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    tree |= {"__init__.py", "_checks.py"}
    assert rows == tree, f"CONTRIBUTING.md's table has rows {sorted(rows)}; lessons_lib holds {sorted(tree)}"
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
