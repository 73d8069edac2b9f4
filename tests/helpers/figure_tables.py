"""The tables a live figure shows under "Numbers as a table", computed by its own JavaScript in node.

``live_figures.js`` builds each figure's tables in the browser from the state it draws (``KINDS.<kind>.
tables``). :func:`live_tables` runs that code in node (no browser, no kernel) on the widgets' synced state:
one node process for a list of figures, so the unit tests of every kind stay fast.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from lessons_lib.figures.live.base import ESM

_RUNNER = """
import { KINDS } from "./live_figures.mjs";
const input = JSON.parse(readFileSync(0, "utf-8"));
const out = [];
for (const { kind, state } of input) {
  for (const [k, v] of Object.entries(state)) {
    if (v && typeof v === "object" && "__b64__" in v) {
      state[k] = new Uint8Array(Buffer.from(v.__b64__, "base64"));
    }
  }
  const model = { get: (name) => state[name] };
  const s = await KINDS[kind].prepare(model);
  out.push(KINDS[kind].tables(s));
}
process.stdout.write(JSON.stringify(out));
"""


def _plain(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"__b64__": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def widget_state(figure) -> dict:
    """A live figure's synced traits, as the browser's model holds them (bytes as bytes)."""
    js = figure._esm
    kind = js[js.index(f"KINDS.{figure._kind} = {{"):]
    traits = kind[kind.index("traits: [") + 9:kind.index("]")]
    names = [t.strip().strip('"') for t in traits.split(",") if t.strip()]
    return {name: _plain(getattr(figure, name)) for name in names}


def live_tables(figures) -> list[list[dict]]:
    """For each figure, the tables its JavaScript builds: ``[{caption, corner, cols, rows}, ...]``."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is needed to run the live figures' JavaScript (apt-get install nodejs)")
    jobs = [{"kind": f._kind, "state": widget_state(f)} for f in figures]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "live_figures.mjs").write_text(ESM, encoding="utf-8")
        Path(tmp, "run.mjs").write_text('import { readFileSync } from "node:fs";\n' + _RUNNER,
                                        encoding="utf-8")
        done = subprocess.run([node, "run.mjs"], cwd=tmp, input=json.dumps(jobs), capture_output=True,
                              text=True, timeout=120, check=False)
    if done.returncode:
        raise RuntimeError(f"node failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)
