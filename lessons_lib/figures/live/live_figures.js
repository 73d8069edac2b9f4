// Live figures of the attention course, drawn in the browser on a <canvas>.
//
// One ES module for every figure kind (heatmap, grid, bars, lines, product, heads: the KINDS
// below); the Python side (lessons_lib/figures/live/, one module per kind) picks the kind with
// the `_kind` trait. No dependencies, no build step, nothing from a CDN: anywidget loads this
// file as it is, after one line of style constants from Python (STYLE, below).
//
// How data arrives: matrices as binary traits (float32, or zlib-compressed
// 8-bit colour indices for large ones), masks as packed bits, labels as lists
// (the kernel sends them only when they change), colour maps as matplotlib's
// 256-entry RGB tables. Every change only marks the figure dirty; one draw per
// animation frame paints the latest state, so fast slider moves never queue.
// Hover and row clicks are answered here, without a kernel round trip.
//
// For the keyboard and screen readers: each figure takes focus (Tab); the arrow keys move a cell
// cursor whose read-out is the hover's text (one function, `readout`, writes both), Enter does what a
// click does, and the figure's name (aria-label) is its `alt`, which describes the data it shows.
// What the keys and clicks change here is said in the explorer's live region (lessons_lib/figures/live/
// access.js): the figure sends a "lessons-announce" event up the page to it.

const FONT = '"DejaVu Sans", "Helvetica Neue", Helvetica, Arial, sans-serif';
// The look comes from Python (lessons_lib/figures/style.py): the module that loads this file puts
// `const STYLE = {...}` in front of it (figures/live/base.py), so no colour or size is typed twice.
const { tick_px: TICK_PX, label_px: LABEL_PX, title_px: TITLE_PX, mask_face: MASK_FACE, mask_edge: MASK_EDGE,
  mask_note: MASK_NOTE, ink_dark: INK_DARK, ink_light: INK_LIGHT, frame_width: FRAME_PX } = STYLE;
const MAX_LABEL_PX = 110;  // row labels longer than this are cut with "…"

// ------------------------------------------------------------------ data

function bytesOf(v) {
  if (!v) return new Uint8Array(0);
  if (v instanceof Uint8Array) return v;
  if (v instanceof DataView) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return new Uint8Array(0);
}

async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// A matrix trait: {enc: "f32" | "u8z", bytes} -> Float32Array (values) or Uint8Array (colour indices).
async function decodeMatrix(enc, raw) {
  const bytes = bytesOf(raw);
  if (enc === "u8z") return { kind: "u8", data: await inflate(bytes) };
  const copy = bytes.slice();  // aligned copy
  return { kind: "f32", data: new Float32Array(copy.buffer, 0, copy.byteLength >> 2) };
}

function unpackBits(raw, n) {
  const bytes = bytesOf(raw);
  if (!bytes.length) return null;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (bytes[i >> 3] >> (7 - (i & 7))) & 1;
  return out;
}

// Colour index 0..255 of a value, exactly as matplotlib's Normalize + 256-entry colormap.
function colourIndex(v, vmin, vmax) {
  const x = (v - vmin) / (vmax - vmin);
  if (!(x > 0)) return 0;
  if (x >= 1) return 255;
  return Math.min(255, Math.floor(x * 256));
}

// Value shown for a cell: exact for float32 data, the bin centre for 8-bit data.
function cellValue(m, idx, vmin, vmax) {
  if (m.kind === "f32") return { value: m.data[idx], approx: false };
  return { value: vmin + (m.data[idx] + 0.5) / 256 * (vmax - vmin), approx: true };
}

function lutOf(raw) {
  const b = bytesOf(raw);
  return b.length >= 768 ? b : null;
}

// The colour of a number written on colour i of the map: black or white, whichever has the higher WCAG
// contrast with it (the table comes from Python: figures/style.py, ink_table).
function inkOf(ink, i) { return ink && ink[i] ? INK_LIGHT : INK_DARK; }

// ------------------------------------------------------------------ text and numbers

function font(px, bold) { return `${bold ? "bold " : ""}${px}px ${FONT}`; }

function fit(ctx, text, maxWidth) {
  if (ctx.measureText(text).width <= maxWidth) return text;
  let t = text;
  while (t.length > 1 && ctx.measureText(t + "…").width > maxWidth) t = t.slice(0, -1);
  return t + "…";
}

function fmtNumber(v, decimals) {
  if (!Number.isFinite(v)) return String(v);
  const s = v.toFixed(decimals);
  return (/^-0(\.0*)?$/.test(s) ? s.slice(1) : s).replace("-", "−");
}

function fmtExact(v) {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v) && Math.abs(v) < 1e5) return String(v).replace("-", "−");  // d_k = 128, not 128.0
  const a = Math.abs(v);
  const s = a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(3) : v.toPrecision(4);
  return String(Number(s) === 0 ? "0" : s).replace("-", "−");
}

// "Nice" colorbar ticks, as matplotlib's MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]).
function niceTicks(lo, hi, nbins = 6) {
  const span = hi - lo;
  if (!(span > 0)) return { ticks: [lo], decimals: 2 };
  const raw = span / nbins;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = 10 * mag;
  for (const s of [1, 2, 2.5, 5, 10]) { if (s * mag >= raw * (1 - 1e-9)) { step = s * mag; break; } }
  const ticks = [];
  const first = Math.ceil(lo / step - 1e-9) * step;
  for (let t = first; t <= hi + step * 1e-9; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) + (step / mag === 2.5 ? 1 : 0);
  return { ticks, decimals };
}

// ------------------------------------------------------------------ canvas helpers

function setupCanvas(canvas, w, h) {
  const r = window.devicePixelRatio || 1;
  const W = Math.round(w * r), H = Math.round(h * r);
  if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(r, 0, 0, r, 0, 0);
  return ctx;
}

let hatchCache = null;
function hatchPattern(ctx) {
  if (!hatchCache) {
    const c = document.createElement("canvas");
    c.width = c.height = 8;
    const g = c.getContext("2d");
    g.fillStyle = MASK_FACE; g.fillRect(0, 0, 8, 8);
    g.strokeStyle = MASK_EDGE; g.lineWidth = 1.2;
    g.beginPath();
    for (const o of [-8, 0, 8]) { g.moveTo(o, 8); g.lineTo(o + 8, 0); }
    g.stroke();
    hatchCache = c;
  }
  return ctx.createPattern(hatchCache, "repeat");
}

function drawTitle(ctx, text, cx, y, maxWidth) {
  ctx.font = font(TITLE_PX, true);
  ctx.fillStyle = "#000";
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  const lines = String(text || "").split("\n").slice(0, 2);
  lines.forEach((line, k) => ctx.fillText(fit(ctx, line, maxWidth), cx, y + k * (TITLE_PX + 4)));
  return lines.filter((l) => l).length * (TITLE_PX + 4);
}

function titleHeight(text) {
  const n = String(text || "").split("\n").slice(0, 2).filter((l) => l).length;
  return n ? n * (TITLE_PX + 4) + 6 : 4;
}

// ------------------------------------------------------------------ heatmap panel

// Layout of one heatmap panel inside the box (x, y, w, h); returns the axes rectangle and strips.
function heatmapLayout(ctx, p, box) {
  const { rows, cols } = p;
  const lay = { box };
  const top = box.y + (p.showTitle === false ? 2 : titleHeight(p.title));
  // row labels: widest label, capped
  ctx.font = font(TICK_PX, false);
  let rowW = 0;
  if (p.showRowLabels !== false) {
    for (const i of p.rowTicks) rowW = Math.max(rowW, ctx.measureText(p.rowText[i] || "").width);
    rowW = Math.min(rowW, MAX_LABEL_PX) + 8;
  }
  const ylabelW = p.ylabel ? LABEL_PX + 6 : 0;
  // colorbar: bar, tick numbers, rotated label
  let cbarW = 0;
  if (p.colorbar !== false) {
    const { ticks, decimals } = niceTicks(p.vmin, p.vmax);
    let tw = 0;
    for (const t of ticks) tw = Math.max(tw, ctx.measureText(fmtNumber(t, decimals)).width);
    cbarW = 12 + 14 + 6 + tw + 6 + (p.cbarLabel ? LABEL_PX + 4 : 0);
  }
  const left = box.x + ylabelW + rowW;
  const axW = Math.max(10, box.x + box.w - cbarW - left - 4);
  // column labels: upright when they fit side by side, else turned 90°
  let colH = 0, colUpright = true, colMax = 0;
  if (p.showColLabels !== false) {
    for (const j of p.colTicks) colMax = Math.max(colMax, ctx.measureText(p.colText[j] || "").width);
    const pitch = axW / Math.max(cols, 1) * (p.colTicks.length > 1 ? (p.colTicks[1] - p.colTicks[0]) : 1);
    colUpright = colMax <= 0.9 * pitch;
    colH = (colUpright ? TICK_PX + 2 : Math.min(colMax, MAX_LABEL_PX)) + 8;
  }
  const bottomH = colH + (p.xlabel ? LABEL_PX + 8 : 0) + (p.anyMasked && p.maskNote !== false ? TICK_PX + 8 : 0);
  const axH = Math.max(10, box.y + box.h - bottomH - top - 4);
  Object.assign(lay, { ax: { x: left, y: top, w: axW, h: axH }, rowW, ylabelW, cbarW, colH, colUpright, colMax });
  return lay;
}

// Thin tick positions further when they would overlap at 12 px.
function thin(ticks, pitchPx, need) {
  if (ticks.length < 2) return ticks;
  const spacing = (ticks[1] - ticks[0]) * pitchPx;
  const k = Math.max(1, Math.ceil(need / Math.max(spacing, 1e-6)));
  return k === 1 ? ticks : ticks.filter((_, i) => i % k === 0);
}

function drawHeatmapPanel(ctx, p, box) {
  const lay = heatmapLayout(ctx, p, box);
  const { ax } = lay;
  const { rows, cols, m, lut, vmin, vmax } = p;
  const cw = ax.w / cols, ch = ax.h / rows;
  // cells: one pixel per cell on a small canvas, scaled up without smoothing
  const img = new ImageData(cols, rows);
  const px = img.data;
  for (let i = 0; i < rows * cols; i++) {
    const c = m.kind === "u8" ? m.data[i] : colourIndex(m.data[i], vmin, vmax);
    px[4 * i] = lut[3 * c]; px[4 * i + 1] = lut[3 * c + 1]; px[4 * i + 2] = lut[3 * c + 2]; px[4 * i + 3] = 255;
  }
  const small = document.createElement("canvas");
  small.width = cols; small.height = rows;
  small.getContext("2d").putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(small, ax.x, ax.y, ax.w, ax.h);
  // masked cells: grey and hatched, one rectangle per run in a row
  if (p.mask) {
    ctx.fillStyle = hatchPattern(ctx);
    for (let r = 0; r < rows; r++) {
      let c = 0;
      while (c < cols) {
        if (!p.mask[r * cols + c]) { c++; continue; }
        const start = c;
        while (c < cols && p.mask[r * cols + c]) c++;
        ctx.fillRect(ax.x + start * cw, ax.y + r * ch, (c - start) * cw, ch);
      }
    }
  }
  // values in the cells, when they fit at 12 px
  if (p.annotate && rows <= p.annotateMax && cols <= p.annotateMax) {
    ctx.font = font(TICK_PX, false);
    const sample = fmtNumber(-Math.max(Math.abs(vmin), Math.abs(vmax)), p.decimals);
    if (ctx.measureText(sample).width + 4 <= cw && TICK_PX + 2 <= ch) {
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const idx = r * cols + c;
          if (p.mask && p.mask[idx]) continue;
          const { value } = cellValue(m, idx, vmin, vmax);
          const ci = m.kind === "u8" ? m.data[idx] : colourIndex(value, vmin, vmax);
          ctx.fillStyle = inkOf(p.ink, ci);
          ctx.fillText(fmtNumber(value, p.decimals), ax.x + (c + 0.5) * cw, ax.y + (r + 0.5) * ch);
        }
      }
    }
  }
  // frame
  ctx.strokeStyle = "#000"; ctx.lineWidth = 1;
  ctx.strokeRect(ax.x - 0.5, ax.y - 0.5, ax.w + 1, ax.h + 1);
  // highlighted row: black frame with a white line inside (visible on every colour)
  if (p.highlightRow >= 0 && p.highlightRow < rows) {
    const y0 = ax.y + p.highlightRow * ch;
    ctx.lineWidth = 3; ctx.strokeStyle = "#000";
    ctx.strokeRect(ax.x + 1.5, y0 + 1.5, ax.w - 3, Math.max(ch - 3, 1));
    if (ch > 8) {
      ctx.lineWidth = 1; ctx.strokeStyle = "#fff";
      ctx.strokeRect(ax.x + 3.5, y0 + 3.5, ax.w - 7, ch - 7);
    }
  }
  // row labels (queries) on the left, the highlighted one in bold
  ctx.fillStyle = "#000"; ctx.strokeStyle = "#333"; ctx.lineWidth = 1;
  if (p.showRowLabels !== false) {
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    for (const r of thin(p.rowTicks, ch, TICK_PX + 1)) {
      const y = ax.y + (r + 0.5) * ch;
      ctx.font = font(TICK_PX, r === p.highlightRow);
      ctx.fillText(fit(ctx, p.rowText[r] || "", MAX_LABEL_PX), ax.x - 7, y);
      ctx.beginPath(); ctx.moveTo(ax.x - 4, y); ctx.lineTo(ax.x, y); ctx.stroke();
    }
  }
  // column labels (keys) below
  if (p.showColLabels !== false) {
    ctx.font = font(TICK_PX, false);
    const y = ax.y + ax.h;
    const ticks = thin(p.colTicks, cw, lay.colUpright ? lay.colMax + 6 : TICK_PX + 1);
    for (const c of ticks) {
      const x = ax.x + (c + 0.5) * cw;
      ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x, y + 4); ctx.stroke();
      const text = p.colText[c] || "";
      if (lay.colUpright) {
        ctx.textAlign = "center"; ctx.textBaseline = "top";
        ctx.fillText(text, x, y + 6);
      } else {
        ctx.save(); ctx.translate(x, y + 6); ctx.rotate(-Math.PI / 2);
        ctx.textAlign = "right"; ctx.textBaseline = "middle";
        ctx.fillText(fit(ctx, text, MAX_LABEL_PX), 0, 0);
        ctx.restore();
      }
    }
  }
  // axis labels
  ctx.font = font(LABEL_PX, false); ctx.fillStyle = "#000";
  if (p.xlabel) {
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    ctx.fillText(fit(ctx, p.xlabel, ax.w + lay.cbarW), ax.x + ax.w / 2, ax.y + ax.h + lay.colH + 2);
  }
  if (p.ylabel) {
    ctx.save(); ctx.translate(box.x + 2, ax.y + ax.h / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    ctx.fillText(fit(ctx, p.ylabel, ax.h + 20), 0, 0);
    ctx.restore();
  }
  if (p.anyMasked && p.maskNote !== false) {
    ctx.font = font(TICK_PX, false); ctx.textAlign = "center"; ctx.textBaseline = "top";
    const yy = ax.y + ax.h + lay.colH + (p.xlabel ? LABEL_PX + 8 : 2);
    ctx.fillText(fit(ctx, MASK_NOTE, box.w - 8), Math.min(Math.max(ax.x + ax.w / 2, box.x + box.w / 2), box.x + box.w / 2), yy);
  }
  if (p.colorbar !== false) drawColorbar(ctx, lut, vmin, vmax, p.cbarLabel, ax.x + ax.w + 12, ax.y, ax.h);
  if (p.showTitle !== false) drawTitle(ctx, p.title, ax.x + ax.w / 2, box.y + 2, box.w - 8);
  return lay;
}

// Which cell (or row label) is under (x, y) in a drawn heatmap panel; null when none.
function heatmapHit(p, lay, x, y) {
  const { ax } = lay;
  const r = Math.floor((y - ax.y) / ax.h * p.rows);
  const c = Math.floor((x - ax.x) / ax.w * p.cols);
  if (r < 0 || r >= p.rows) return null;
  if (x >= ax.x - lay.rowW - 2 && x < ax.x) return { row: r, col: -1 };
  if (c < 0 || c >= p.cols) return null;
  return { row: r, col: c };
}

function heatmapReadout(p, hit) {
  const rowName = p.rowName || "row", colName = p.colName || "column";
  if (hit.col < 0) return `${rowName} “${p.rowText[hit.row]}” (${hit.row}): click to select it`;
  const idx = hit.row * p.cols + hit.col;
  const who = `${rowName} “${p.rowText[hit.row]}” (${hit.row}) → ${colName} “${p.colText[hit.col]}” (${hit.col})`;
  if (p.mask && p.mask[idx]) return `${who}: ${p.hiddenText ? p.hiddenText : "masked (may not attend)"}`;
  const { value, approx } = cellValue(p.m, idx, p.vmin, p.vmax);
  let s = `${who}: ${approx ? "≈ " : ""}${fmtExact(value)}`;
  if (p.percent) s += ` (${approx ? "≈ " : ""}${(100 * value).toFixed(1)}%)`;
  return s;
}

// ------------------------------------------------------------------ the numbers as a table
// Every figure's data can be read as HTML tables (WCAG 1.1.1: a screen reader reads a whole matrix row by
// row instead of 64 arrow-key presses; a magnifier user reads numbers, not colours). A kind supplies
// `tables(s)`: [{caption, corner, cols: [header, ...], rows: [[row header, cell, ...], ...]}], built from
// the state it draws (no kernel traffic); the shell (tableElement, below) turns them into <table>s with
// <caption>, <th scope="col"> and <th scope="row">, built only while they are shown.
const TABLE_SIDE = 32;     // a matrix up to this many rows and columns is shown whole ...
const TABLE_POINTS = 64;   // ... a series up to this many points (beyond: a summary and a part, said so)

// A token as a header: its text and its position ("“sat” (2)"), or the position alone for an index.
function tokenHead(text, i) {
  const t = text === undefined || text === null ? "" : String(text);
  return t === "" || t === String(i) ? String(i) : `“${t}” (${i})`;
}

// A number as the figure's read-out writes it: 4 significant digits, "≈" where the data is 8-bit.
function valueText(value, approx) { return `${approx ? "≈ " : ""}${fmtExact(value)}`; }

// Up to `n` consecutive indices of 0..total-1, around `centre` (the part the figure points at).
function windowOf(total, n, centre) {
  const first = Math.max(0, Math.min(total - n, (centre >= 0 ? centre : 0) - Math.floor(n / 2)));
  return Array.from({ length: Math.min(n, total) }, (_, i) => first + i);
}

function span(ix) { return ix.length === 1 ? `${ix[0]}` : `${ix[0]}–${ix[ix.length - 1]}`; }

// One matrix panel {rows, cols, m, mask, vmin, vmax, rowText, colText} as a table; past TABLE_SIDE rows or
// columns, the part around `focus` (a highlighted row), with the shape and extremes in the caption.
function matrixTable(p, caption, { rowName = "row", colName = "column", focus = -1, colTexts = null } = {}) {
  const ri = windowOf(p.rows, TABLE_SIDE, focus), ci = windowOf(p.cols, TABLE_SIDE, focus);
  const colText = colTexts || p.colText;
  let text = caption;
  if (ri.length < p.rows || ci.length < p.cols) {
    let lo = Infinity, hi = -Infinity, at = [0, 0, 0, 0], approx = false;
    for (let r = 0; r < p.rows; r++) {
      for (let c = 0; c < p.cols; c++) {
        const idx = r * p.cols + c;
        if (p.mask && p.mask[idx]) continue;
        const { value, approx: a } = cellValue(p.m, idx, p.vmin, p.vmax);
        approx = approx || a;
        if (value < lo) { lo = value; at = [r, c, at[2], at[3]]; }
        if (value > hi) { hi = value; at = [at[0], at[1], r, c]; }
      }
    }
    text += `. ${p.rows} × ${p.cols} values: smallest ${valueText(lo, approx)} (${rowName} ${at[0]}, ${colName} `
      + `${at[1]}), largest ${valueText(hi, approx)} (${rowName} ${at[2]}, ${colName} ${at[3]}); shown: rows `
      + `${span(ri)} and columns ${span(ci)}`;
  }
  const rows = ri.map((r) => [tokenHead(p.rowText[r], r), ...ci.map((c) => {
    const idx = r * p.cols + c;
    if (p.mask && p.mask[idx]) return p.hiddenText || "masked";
    const { value, approx } = cellValue(p.m, idx, p.vmin, p.vmax);
    return valueText(value, approx);
  })]);
  return { caption: text, corner: `${rowName} / ${colName}`, cols: ci.map((c) => tokenHead(colText[c], c)), rows,
    rowIndex: ri, colIndex: ci };
}

function firstLine(text) { return String(text || "").split("\n")[0]; }

// What a matrix figure's caption says: its title, what the values are, what rows and columns are.
function matrixCaption(title, what, rowName, colName) {
  return `${firstLine(title) || "Figure"}${what ? `: ${what}` : ""}; one row per ${rowName}, one column per ${colName}`;
}

// A grid's (or head view's) panels, one table each; `locked`: the panel locked (said in its caption).
function panelTables(s, locked = -1) {
  const rowName = s.rowName || "row", colName = s.colName || "column", per = s.rows * s.cols;
  return Array.from({ length: s.n }, (_, k) => {
    const p = { ...s, m: { kind: s.m.kind, data: s.m.data.subarray(k * per, (k + 1) * per) } };
    const name = `${s.panelTitles[k] || `panel ${k}`}${k === locked ? " (locked)" : ""}`;
    const title = `${firstLine(s.title) ? `${firstLine(s.title)}, ` : ""}${name}`;
    return matrixTable(p, matrixCaption(title, s.cbarLabel, rowName, colName), { rowName, colName });
  });
}

function tableElement(t) {
  const table = document.createElement("table");
  table.className = "lessons-figure-table";
  table.createCaption().textContent = t.caption;
  const head = table.createTHead().insertRow();
  for (const [k, text] of [t.corner, ...t.cols].entries()) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = text;
    if (k === 0) th.className = "lessons-figure-table-corner";
    else th.dataset.index = String(t.colIndex ? t.colIndex[k - 1] : k - 1);  // the column of the data
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const [i, [name, ...cells]] of t.rows.entries()) {
    const tr = body.insertRow();
    tr.dataset.index = String(t.rowIndex ? t.rowIndex[i] : i);  // the row (point, bar) of the data
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = name;
    tr.appendChild(th);
    for (const c of cells) tr.insertCell().textContent = c;
  }
  return table;
}

// ------------------------------------------------------------------ the widget shell

const SHELL_CSS_CLASS = "lessons-figure";

let shellCount = 0;

function makeShell(el, model, kind) {
  el.classList.add(SHELL_CSS_CLASS);
  const root = document.createElement("div");
  root.className = "lessons-figure-root";

  const stage = document.createElement("div");
  stage.className = "lessons-figure-stage";
  const canvas = document.createElement("canvas");
  canvas.className = "lessons-figure-canvas";
  canvas.setAttribute("role", "img");
  const overlay = document.createElement("canvas");
  overlay.className = "lessons-figure-overlay";
  overlay.setAttribute("aria-hidden", "true");
  stage.append(canvas, overlay);
  // the keys, said after the figure's name (aria-describedby); not drawn
  const keys = document.createElement("span");
  keys.className = "lessons-sr-only";
  keys.id = `lessons-figure-keys-${++shellCount}-${Math.random().toString(36).slice(2, 8)}`;
  const help = typeof kind.keys === "function" ? kind.keys(model) : kind.keys;
  // a screen reader's browse mode keeps the arrow keys for itself (Orca's transcript, docs/accessibility.md)
  keys.textContent = help ? `${help} With a screen reader, switch to focus mode first (NVDA+Space, Orca+A).` : "";
  if (help) {
    canvas.tabIndex = 0;
    canvas.setAttribute("aria-describedby", keys.id);
  }
  // under the picture: the read-out line and the save button (never over the title)
  const foot = document.createElement("div");
  foot.className = "lessons-figure-foot";
  const readout = document.createElement("div");
  readout.className = "lessons-figure-readout";
  readout.textContent = "\u00a0";
  const save = document.createElement("button");
  save.className = "lessons-figure-save";
  save.type = "button";
  save.textContent = "⤓ PNG";
  save.title = "Save this picture as a PNG file";
  // the figure's numbers as tables, under it: shown and hidden by one button (render fills them in)
  const tableId = `lessons-figure-tables-${shellCount}-${Math.random().toString(36).slice(2, 8)}`;
  const tableButton = document.createElement("button");
  tableButton.className = "lessons-figure-table-toggle";
  tableButton.type = "button";
  tableButton.textContent = "Numbers as a table";
  tableButton.setAttribute("aria-expanded", "false");
  tableButton.setAttribute("aria-controls", tableId);
  const tables = document.createElement("div");
  tables.className = "lessons-figure-tables";
  tables.id = tableId;
  tables.hidden = true;
  tables.setAttribute("role", "region");
  tables.tabIndex = 0;  // it may scroll sideways (a wide matrix): the keyboard scrolls it too
  foot.append(readout, tableButton, save);
  root.append(stage, foot, tables, keys);
  el.appendChild(root);
  save.addEventListener("click", () => {
    const name = (model.get("title") || "figure").split("\n")[0].replace(/[^\w.-]+/g, "_").slice(0, 60);
    canvas.toBlob((blob) => {
      if (!blob) return;
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = `${name || "figure"}.png`;
      document.body.appendChild(a);
      a.click();
      setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    }, "image/png");
  });
  return { root, canvas, overlay, readout, stage, save, tableButton, tables };
}

// Forced colours (Windows' high contrast): the browser recolours the page but never a canvas, so the figure
// paints its page and its ink in the system's colours itself (Canvas and CanvasText, which the stylesheet
// gives the figure's root under forced colours): every "#fff" and "#000" a drawing sets on this context is
// taken as the page and the ink. What carries data keeps its colours: the colour map, the cells' numbers
// (black or white by cell), the mask's hatching, the cursor's black-and-white frame.
const FORCED_COLOURS = "(forced-colors: active)";
const STYLES = ["fillStyle", "strokeStyle"];
function systemInk(ctx, root) {
  if (!matchMedia(FORCED_COLOURS).matches) { for (const p of STYLES) delete ctx[p]; return; }
  const cs = getComputedStyle(root);
  const ink = { "#000": cs.color, "#333": cs.color, "#fff": cs.backgroundColor };
  const proto = CanvasRenderingContext2D.prototype;
  for (const p of STYLES) {
    const { get, set } = Object.getOwnPropertyDescriptor(proto, p);
    Object.defineProperty(ctx, p, { configurable: true, get() { return get.call(ctx); },
      set(v) { set.call(ctx, (typeof v === "string" && ink[v]) || v); } });
  }
}

// The frame around the cell under the pointer or the cursor: a black ring and a white one beside it, so one
// of the two contrasts at least 3:1 with any colour (figures/style.py: FRAME_WIDTH). Inside a large cell;
// around a small one (a thumbnail's), where it would hide the cell.
function drawFrame(ctx, rect) {
  const F = FRAME_PX;
  ctx.lineWidth = F;
  if (rect.w > 4 * F && rect.h > 4 * F) {
    ctx.strokeStyle = INK_DARK;
    ctx.strokeRect(rect.x + F / 2, rect.y + F / 2, rect.w - F, rect.h - F);
    ctx.strokeStyle = INK_LIGHT;
    ctx.strokeRect(rect.x + 1.5 * F, rect.y + 1.5 * F, rect.w - 3 * F, rect.h - 3 * F);
  } else {
    ctx.strokeStyle = INK_LIGHT;
    ctx.strokeRect(rect.x - F / 2, rect.y - F / 2, rect.w + F, rect.h + F);
    ctx.strokeStyle = INK_DARK;
    ctx.strokeRect(rect.x - 1.5 * F, rect.y - 1.5 * F, rect.w + 3 * F, rect.h + 3 * F);
  }
}

// The cell cursor over matrix panels (a heatmap is one panel; a grid, a head view, a product several):
// `panels` [{rows, cols}], `cur` {panel, row, col} or null (start at `start`). Arrows move one cell and
// cross into the next panel at the left and right edges; Home / End: the row's first / last cell;
// PageUp / PageDown: the previous / next panel. Returns the new cursor, or null for another key.
function movePanels(panels, cur, key, start) {
  if (!panels.length) return null;
  const keysUsed = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"];
  if (!keysUsed.includes(key)) return null;
  if (!cur) return start || { panel: 0, row: 0, col: 0 };
  let k = Math.min(Math.max(cur.panel || 0, 0), panels.length - 1);
  let r = Math.max(cur.row, 0), c = Math.max(cur.col, 0);
  const clamp = () => {
    r = Math.min(r, panels[k].rows - 1); c = Math.min(c, panels[k].cols - 1);
  };
  if (key === "ArrowUp") r = Math.max(0, r - 1);
  else if (key === "ArrowDown") r = Math.min(panels[k].rows - 1, r + 1);
  else if (key === "Home") c = 0;
  else if (key === "End") c = panels[k].cols - 1;
  else if (key === "ArrowLeft") {
    if (c > 0) c -= 1;
    else if (k > 0) { k -= 1; c = panels[k].cols - 1; clamp(); }
  } else if (key === "ArrowRight") {
    if (c < panels[k].cols - 1) c += 1;
    else if (k < panels.length - 1) { k += 1; c = 0; clamp(); }
  } else if (key === "PageUp" && k > 0) { k -= 1; clamp(); }
  else if (key === "PageDown" && k < panels.length - 1) { k += 1; clamp(); }
  return { panel: k, row: r, col: c };
}

// Whether a cursor's cell (a `hit`) is still among the cells of a new state.
function cursorFits(kind, s, hit) {
  if (!kind.cells || !hit) return false;
  if (hit.series !== undefined) {
    const se = s.series[hit.series];
    return !!se && se.mode !== undefined && hit.index < se.x.length;
  }
  const cells = kind.cells(s), k = hit.panel || 0;
  if (!(k < cells.length)) return false;
  const [rows, cols] = cells[k];
  return (hit.row || 0) < rows && (hit.col !== undefined ? hit.col : hit.index || 0) < cols;
}

// A list cursor (bars, a series' points): Left / Right, Home / End.
function moveList(n, index, key) {
  if (!["ArrowLeft", "ArrowRight", "Home", "End", "ArrowUp", "ArrowDown"].includes(key) || !n) return null;
  if (index === null || index === undefined) return 0;
  if (key === "ArrowLeft") return Math.max(0, index - 1);
  if (key === "ArrowRight") return Math.min(n - 1, index + 1);
  if (key === "Home") return 0;
  if (key === "End") return n - 1;
  return index;
}

// Each kind: `traits` (the Python traits it reads; tests/figures/test_live_figures.py holds them equal to
// the widget's synced traits), an async `prepare(model)` that decodes them into a plain state,
// `draw(ctx, state, w, h)` returning hit-test info, `hit(state, info, x, y)` for the cell under the
// pointer, `readout(state, hit)` and `cellRect(state, info, hit)` for the hover read-out; optional
// `hoverModel(model, hit)` and `keepHover(state, hover)`. For the keyboard: `keys` (what the keys do, in
// words, said after the figure's name), `cursor(state, info, hit, key)` (the cell the cursor moves to: a
// `hit` as `hit` returns, so the read-out is the hover's; null for a key it does not use) and optional
// `heard(before, state)` (a sentence for the live region when the state changed in the browser), and
// `cells(state)`: what the cursor walks, [[rows, cols] per panel] (PageUp / PageDown change panel).
const KINDS = {};

function common(model) {
  return {
    title: model.get("title"), alt: model.get("alt"),
    width: model.get("width"), height: model.get("height"),
  };
}

// ---------------- heatmap (one matrix)
KINDS.heatmap = {
  traits: ["values", "encoding", "shape", "mask", "row_labels", "col_labels", "row_ticks", "col_ticks",
    "vmin", "vmax", "lut", "ink", "title", "xlabel", "ylabel", "colorbar_label", "decimals", "annotate_max",
    "highlight_row", "percent", "row_name", "col_name", "hidden_text", "alt", "width", "height"],
  async prepare(model) {
    const [rows, cols] = model.get("shape");
    const m = await decodeMatrix(model.get("encoding"), model.get("values"));
    const mask = unpackBits(model.get("mask"), rows * cols);
    return {
      ...common(model), rows, cols, m, mask, anyMasked: !!mask && mask.some((b) => b),
      rowText: model.get("row_labels"), colText: model.get("col_labels"),
      rowTicks: model.get("row_ticks"), colTicks: model.get("col_ticks"),
      vmin: model.get("vmin"), vmax: model.get("vmax"), lut: lutOf(model.get("lut")), ink: bytesOf(model.get("ink")),
      xlabel: model.get("xlabel"), ylabel: model.get("ylabel"), cbarLabel: model.get("colorbar_label"),
      decimals: model.get("decimals"), annotate: model.get("annotate_max") > 0,
      annotateMax: model.get("annotate_max"), highlightRow: model.get("highlight_row"),
      percent: model.get("percent"), rowName: model.get("row_name"), colName: model.get("col_name"),
      hiddenText: model.get("hidden_text"),
    };
  },
  draw(ctx, s, w, h) {
    if (!s.lut || !s.rows || !s.cols) return null;
    const lay = drawHeatmapPanel(ctx, s, { x: 4, y: 2, w: w - 8, h: h - 4 });
    return { lay };
  },
  hit(s, info, x, y) { return info ? heatmapHit(s, info.lay, x, y) : null; },
  readout(s, hit) { return heatmapReadout(s, hit); },
  tables(s) {
    const rowName = s.rowName || "row", colName = s.colName || "column";
    return [matrixTable(s, matrixCaption(s.title, s.cbarLabel, rowName, colName),
      { rowName, colName, focus: s.highlightRow })];
  },
  keys(model) {
    return `Arrow keys move a cell cursor and read out its ${model.get("row_name") || "row"}, `
      + `${model.get("col_name") || "column"} and value${model.get("selectable") ? "; Enter selects its row" : ""}.`;
  },
  cells(s) { return [[s.rows, s.cols]]; },
  cursor(s, info, hit, key) {
    const start = { panel: 0, row: s.highlightRow >= 0 && s.highlightRow < s.rows ? s.highlightRow : 0, col: 0 };
    const m = movePanels([{ rows: s.rows, cols: s.cols }], hit && hit.col >= 0 ? { panel: 0, ...hit } : null,
      key, start);
    return m && { row: m.row, col: m.col };
  },
  cellRect(s, info, hit) {
    const { ax } = info.lay;
    if (hit.col < 0) return { x: ax.x, y: ax.y + hit.row * ax.h / s.rows, w: ax.w, h: ax.h / s.rows };
    return { x: ax.x + hit.col * ax.w / s.cols, y: ax.y + hit.row * ax.h / s.rows, w: ax.w / s.cols, h: ax.h / s.rows };
  },
  click(model, s, hit) {
    if (!model.get("selectable") || !hit) return;
    model.set("highlight_row", hit.row);
    model.save_changes();
  },
};

// ---------------- heatmap grid (several matrices, e.g. one per attention head)
KINDS.grid = {
  traits: ["values", "encoding", "shape", "mask", "row_labels", "col_labels", "row_ticks", "col_ticks",
    "vmin", "vmax", "lut", "ink", "title", "panel_titles", "columns", "colorbar_label", "decimals", "annotate_max",
    "selected", "hovered", "percent", "row_name", "col_name", "hidden_text", "alt", "width", "height", "xlabel",
    "ylabel"],
  async prepare(model) {
    const [n, rows, cols] = model.get("shape");
    const m = await decodeMatrix(model.get("encoding"), model.get("values"));
    const mask = unpackBits(model.get("mask"), rows * cols);
    return {
      ...common(model), n, rows, cols, m, mask, anyMasked: !!mask && mask.some((b) => b),
      rowText: model.get("row_labels"), colText: model.get("col_labels"),
      rowTicks: model.get("row_ticks"), colTicks: model.get("col_ticks"),
      vmin: model.get("vmin"), vmax: model.get("vmax"), lut: lutOf(model.get("lut")), ink: bytesOf(model.get("ink")),
      panelTitles: model.get("panel_titles"), columns: Math.max(1, model.get("columns")),
      cbarLabel: model.get("colorbar_label"), decimals: model.get("decimals"),
      annotateMax: model.get("annotate_max"), selected: model.get("selected"),
      percent: model.get("percent"), rowName: model.get("row_name"), colName: model.get("col_name"),
      hiddenText: model.get("hidden_text"),
      xlabel: model.get("xlabel"), ylabel: model.get("ylabel"),
    };
  },
  draw(ctx, s, w, h) {
    if (!s.lut || !s.n) return null;
    const top = 2 + titleHeight(s.title);
    if (s.title) drawTitle(ctx, s.title, w / 2, 2, w - 8);
    const ncol = Math.min(s.columns, s.n), nrow = Math.ceil(s.n / ncol);
    const cbarW = 80;
    const cellW = (w - 8 - cbarW) / ncol, cellH = (h - top - 4) / nrow;
    const panels = [];
    const per = s.rows * s.cols;
    for (let k = 0; k < s.n; k++) {
      const sub = s.m.kind === "u8" ? s.m.data.subarray(k * per, (k + 1) * per) : s.m.data.subarray(k * per, (k + 1) * per);
      const box = { x: 4 + (k % ncol) * cellW, y: top + Math.floor(k / ncol) * cellH, w: cellW - 6, h: cellH - 6 };
      const p = {
        ...s, m: { kind: s.m.kind, data: sub }, title: (s.panelTitles[k] || `${k}`),
        colorbar: false, showRowLabels: k % ncol === 0, showColLabels: Math.floor(k / ncol) === nrow - 1,
        xlabel: Math.floor(k / ncol) === nrow - 1 ? s.xlabel : "", ylabel: k % ncol === 0 ? s.ylabel : "",
        annotate: s.annotateMax > 0, highlightRow: -1, maskNote: false,
      };
      const lay = drawHeatmapPanel(ctx, p, box);
      if (k === s.selected) {
        ctx.lineWidth = 3; ctx.strokeStyle = "#000";
        ctx.strokeRect(lay.ax.x - 3, lay.ax.y - 3, lay.ax.w + 6, lay.ax.h + 6);
      }
      panels.push({ p, lay });
    }
    // one shared colorbar on the right
    const last = panels[0].lay.ax;
    drawColorbar(ctx, s.lut, s.vmin, s.vmax, s.cbarLabel, w - cbarW + 4, last.y, Math.max(40, h - top - 40), 1);
    return { panels };
  },
  hit(s, info, x, y) {
    if (!info) return null;
    for (let k = 0; k < info.panels.length; k++) {
      const { p, lay } = info.panels[k];
      const { ax } = lay;
      if (x >= ax.x && x < ax.x + ax.w && y >= ax.y && y < ax.y + ax.h) {
        const h = heatmapHit(p, lay, x, y);
        if (h) return { ...h, panel: k };
      }
    }
    return null;
  },
  readout(s, hit) {
    const p = { ...s, m: { kind: s.m.kind, data: s.m.data.subarray(hit.panel * s.rows * s.cols) } };
    return `${s.panelTitles[hit.panel] || hit.panel}: ${heatmapReadout(p, hit)}`;
  },
  tables(s) { return panelTables(s); },
  keys: "Arrow keys move a cell cursor through the panels and read out each value; Page Up and Page Down "
    + "change panel; Enter selects the panel.",
  cells(s) { return Array.from({ length: s.n }, () => [s.rows, s.cols]); },
  cursor(s, info, hit, key) {
    const panels = Array.from({ length: s.n }, () => ({ rows: s.rows, cols: s.cols }));
    return movePanels(panels, hit, key, { panel: Math.max(0, Math.min(s.selected, s.n - 1)), row: 0, col: 0 });
  },
  cellRect(s, info, hit) {
    const { ax } = info.panels[hit.panel].lay;
    return { x: ax.x + hit.col * ax.w / s.cols, y: ax.y + hit.row * ax.h / s.rows, w: ax.w / s.cols, h: ax.h / s.rows };
  },
  hoverModel(model, hit) {
    const k = hit ? hit.panel : -1;
    if (model.get("hovered") !== k) { model.set("hovered", k); model.save_changes(); }
  },
  // said when the learner selects a panel (a click or Enter; in the browser)
  heard(b, s) {
    if (b.n !== s.n || b.selected === s.selected) return "";
    const name = (k) => s.panelTitles[k] || `panel ${k}`;
    return s.selected >= 0 ? `${name(s.selected)} selected (framed)` : `${name(b.selected)} no longer selected`;
  },
  click(model, s, hit) {
    if (!hit) return;
    model.set("selected", model.get("selected") === hit.panel ? -1 : hit.panel);
    model.save_changes();
  },
};

// The one colorbar of every live figure: the colour table as a 14 px bar at (bx, y), h tall, with
// matplotlib's "nice" ticks on its right and the label turned along it. `lineWidth` (the grid's
// shared bar) sets the frame's width; the heatmap's bar keeps the width its panel drew with.
function drawColorbar(ctx, lut, vmin, vmax, label, bx, y, h, lineWidth) {
  const bw = 14;
  const grad = new ImageData(1, 256);
  for (let i = 0; i < 256; i++) {
    const k = 255 - i;
    grad.data.set([lut[3 * k], lut[3 * k + 1], lut[3 * k + 2], 255], 4 * i);
  }
  const g = document.createElement("canvas"); g.width = 1; g.height = 256;
  g.getContext("2d").putImageData(grad, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(g, bx, y, bw, h);
  ctx.strokeStyle = "#000";
  if (lineWidth !== undefined) ctx.lineWidth = lineWidth;
  ctx.strokeRect(bx - 0.5, y - 0.5, bw + 1, h + 1);
  const { ticks, decimals } = niceTicks(vmin, vmax);
  ctx.font = font(TICK_PX, false); ctx.fillStyle = "#000"; ctx.textAlign = "left"; ctx.textBaseline = "middle";
  let tw = 0;
  for (const t of ticks) {
    const yy = y + (vmax - t) / (vmax - vmin) * h;
    ctx.beginPath(); ctx.moveTo(bx + bw, yy); ctx.lineTo(bx + bw + 4, yy); ctx.stroke();
    const str = fmtNumber(t, decimals);
    tw = Math.max(tw, ctx.measureText(str).width);
    ctx.fillText(str, bx + bw + 6, yy);
  }
  if (label) {
    ctx.save(); ctx.translate(bx + bw + 6 + tw + 6, y + h / 2); ctx.rotate(Math.PI / 2);
    ctx.font = font(LABEL_PX, false); ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    ctx.fillText(fit(ctx, label, h + 30), 0, 0);
    ctx.restore();
  }
}

// ---------------- bars (one query's weights)
KINDS.bars = {
  traits: ["values", "mask", "labels", "ticks", "ymax", "title", "xlabel", "ylabel", "color", "percent",
    "bar_name", "alt", "width", "height", "decimals"],
  async prepare(model) {
    const m = await decodeMatrix("f32", model.get("values"));
    const n = m.data.length;
    const mask = unpackBits(model.get("mask"), n);
    return {
      ...common(model), n, v: m.data, mask, labels: model.get("labels"), ticks: model.get("ticks"),
      ymax: model.get("ymax"), xlabel: model.get("xlabel"), ylabel: model.get("ylabel"),
      color: model.get("color"), percent: model.get("percent"), barName: model.get("bar_name"),
      decimals: model.get("decimals"),
    };
  },
  draw(ctx, s, w, h) {
    if (!s.n) return null;
    const top = 2 + titleHeight(s.title);
    ctx.font = font(TICK_PX, false);
    let labMax = 0;
    for (const i of s.ticks) labMax = Math.max(labMax, ctx.measureText(s.labels[i] || "").width);
    const left = 4 + LABEL_PX + 8 + ctx.measureText("0.00").width + 10;
    const axW = w - left - 12;
    const pitch = axW / s.n;
    const upright = labMax <= 0.9 * pitch * (s.ticks.length > 1 ? s.ticks[1] - s.ticks[0] : 1);
    const colH = (upright ? TICK_PX + 2 : Math.min(labMax, MAX_LABEL_PX)) + 8;
    const axH = h - top - colH - (s.xlabel ? LABEL_PX + 8 : 0) - 8;
    const ax = { x: left, y: top, w: axW, h: axH };
    const Y = (v) => ax.y + ax.h * (1 - v / s.ymax);
    // grid and y ticks
    const { ticks, decimals } = niceTicks(0, s.ymax, 5);
    ctx.textAlign = "right"; ctx.textBaseline = "middle"; ctx.lineWidth = 1;
    for (const t of ticks) {
      const y = Math.round(Y(t)) + 0.5;
      ctx.strokeStyle = "#e3e3e3"; ctx.beginPath(); ctx.moveTo(ax.x, y); ctx.lineTo(ax.x + ax.w, y); ctx.stroke();
      ctx.strokeStyle = "#333"; ctx.beginPath(); ctx.moveTo(ax.x - 4, y); ctx.lineTo(ax.x, y); ctx.stroke();
      ctx.fillStyle = "#000"; ctx.fillText(fmtNumber(t, decimals), ax.x - 6, y);
    }
    // bars; masked keys as grey hatched slots marked ✗ (not as bars of 0)
    const bw = Math.max(1, pitch * 0.8);
    const showValues = s.n <= 16 && ctx.measureText("0.00").width <= pitch * 0.95;
    for (let i = 0; i < s.n; i++) {
      const x = ax.x + i * pitch + (pitch - bw) / 2;
      if (s.mask && s.mask[i]) {
        ctx.fillStyle = hatchPattern(ctx);
        ctx.fillRect(x, ax.y, bw, ax.h);
        if (pitch >= 12) {
          ctx.fillStyle = MASK_EDGE; ctx.font = font(LABEL_PX, true); ctx.textAlign = "center"; ctx.textBaseline = "middle";
          ctx.fillText("✗", x + bw / 2, ax.y + ax.h / 2);
        }
        continue;
      }
      const y = Y(Math.min(Math.max(s.v[i], 0), s.ymax));
      ctx.fillStyle = s.color || "#3b528b";
      ctx.fillRect(x, y, bw, ax.y + ax.h - y);
      if (bw >= 4) { ctx.strokeStyle = "#000"; ctx.lineWidth = 0.6; ctx.strokeRect(x, y, bw, ax.y + ax.h - y); }
      if (showValues) {
        ctx.fillStyle = "#000"; ctx.font = font(TICK_PX, false); ctx.textAlign = "center"; ctx.textBaseline = "bottom";
        ctx.fillText(fmtNumber(s.v[i], s.decimals), x + bw / 2, y - 2);
      }
    }
    ctx.strokeStyle = "#000"; ctx.lineWidth = 1;
    ctx.strokeRect(ax.x - 0.5, ax.y - 0.5, ax.w + 1, ax.h + 1);
    // labels
    ctx.font = font(TICK_PX, false); ctx.fillStyle = "#000";
    for (const i of thin(s.ticks, pitch, upright ? labMax + 6 : TICK_PX + 1)) {
      const x = ax.x + (i + 0.5) * pitch;
      ctx.beginPath(); ctx.moveTo(x, ax.y + ax.h); ctx.lineTo(x, ax.y + ax.h + 4); ctx.stroke();
      if (upright) {
        ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.fillText(s.labels[i] || "", x, ax.y + ax.h + 6);
      } else {
        ctx.save(); ctx.translate(x, ax.y + ax.h + 6); ctx.rotate(-Math.PI / 2);
        ctx.textAlign = "right"; ctx.textBaseline = "middle"; ctx.fillText(fit(ctx, s.labels[i] || "", MAX_LABEL_PX), 0, 0);
        ctx.restore();
      }
    }
    ctx.font = font(LABEL_PX, false);
    if (s.xlabel) { ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.fillText(s.xlabel, ax.x + ax.w / 2, ax.y + ax.h + colH); }
    if (s.ylabel) {
      ctx.save(); ctx.translate(6, ax.y + ax.h / 2); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.fillText(fit(ctx, s.ylabel, ax.h), 0, 0); ctx.restore();
    }
    drawTitle(ctx, s.title, w / 2, 2, w - 8);
    return { ax, pitch };
  },
  hit(s, info, x, y) {
    if (!info) return null;
    const { ax, pitch } = info;
    if (y < ax.y || y > ax.y + ax.h + 40) return null;
    const i = Math.floor((x - ax.x) / pitch);
    return i >= 0 && i < s.n ? { index: i } : null;
  },
  readout(s, hit) {
    const who = `${s.barName || "bar"} “${s.labels[hit.index]}” (${hit.index})`;
    if (s.mask && s.mask[hit.index]) return `${who}: masked (may not attend)`;
    const v = s.v[hit.index];
    return `${who}: ${fmtExact(v)}${s.percent ? ` (${(100 * v).toFixed(1)}%)` : ""}`;
  },
  tables(s) {
    const name = s.barName || "bar";
    const rows = Array.from({ length: s.n }, (_, i) => [tokenHead(s.labels[i], i),
      s.mask && s.mask[i] ? "masked" : valueText(s.v[i], false)]);
    return [{ caption: `${firstLine(s.title) || "Bars"}: one row per ${name}`, corner: name,
      cols: [s.ylabel || "value"], rows }];
  },
  keys: "Left and right arrow keys move along the bars and read out each value.",
  cells(s) { return [[1, s.n]]; },
  cursor(s, info, hit, key) {
    const i = moveList(s.n, hit ? hit.index : null, key);
    return i === null ? null : { index: i };
  },
  cellRect(s, info, hit) {
    const { ax, pitch } = info;
    return { x: ax.x + hit.index * pitch, y: ax.y, w: pitch, h: ax.h };
  },
};

// ---------------- line / scatter plot (e.g. variance against d_k)
KINDS.lines = {
  traits: ["series", "marker", "log_x", "log_y", "title", "xlabel", "ylabel", "alt", "width", "height", "xticks"],
  async prepare(model) {
    return {
      ...common(model), series: model.get("series"), marker: model.get("marker"),
      logX: model.get("log_x"), logY: model.get("log_y"), xlabel: model.get("xlabel"), ylabel: model.get("ylabel"),
      xticks: model.get("xticks"),
    };
  },
  draw(ctx, s, w, h) {
    const top = 2 + titleHeight(s.title);
    const ax = { x: 4 + LABEL_PX + 8 + 40, y: top, w: w - (4 + LABEL_PX + 8 + 40) - 14, h: h - top - (TICK_PX + 10) - (LABEL_PX + 10) };
    let xs = [], ys = [];
    for (const se of s.series) { xs = xs.concat(se.x); ys = ys.concat(se.y); }
    if (!xs.length) return null;
    const tx = (v) => (s.logX ? Math.log2(v) : v), ty = (v) => (s.logY ? Math.log2(v) : v);
    let x0 = Math.min(...xs.map(tx)), x1 = Math.max(...xs.map(tx));
    let y0 = Math.min(...ys.map(ty)), y1 = Math.max(...ys.map(ty));
    const px = (x1 - x0) * 0.05 || 1, py = (y1 - y0) * 0.08 || 1;
    x0 -= px; x1 += px; y0 -= py; y1 += py;
    const X = (v) => ax.x + (tx(v) - x0) / (x1 - x0) * ax.w;
    const Y = (v) => ax.y + ax.h - (ty(v) - y0) / (y1 - y0) * ax.h;
    // grid and ticks: powers of two on log axes
    ctx.font = font(TICK_PX, false); ctx.lineWidth = 1;
    const xt = s.xticks && s.xticks.length ? s.xticks : (s.logX ? pow2Ticks(x0, x1) : niceTicks(x0, x1).ticks);
    const yt = s.logY ? pow2Ticks(y0, y1) : niceTicks(y0, y1).ticks;
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    for (const t of xt) {
      const x = Math.round(X(t)) + 0.5;
      ctx.strokeStyle = "#e3e3e3"; ctx.beginPath(); ctx.moveTo(x, ax.y); ctx.lineTo(x, ax.y + ax.h); ctx.stroke();
      ctx.fillStyle = "#000"; ctx.fillText(String(t), x, ax.y + ax.h + 5);
    }
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    for (const t of yt) {
      const y = Math.round(Y(t)) + 0.5;
      ctx.strokeStyle = "#e3e3e3"; ctx.beginPath(); ctx.moveTo(ax.x, y); ctx.lineTo(ax.x + ax.w, y); ctx.stroke();
      ctx.fillStyle = "#000"; ctx.fillText(String(t), ax.x - 5, y);
    }
    ctx.save();
    ctx.beginPath(); ctx.rect(ax.x, ax.y, ax.w, ax.h); ctx.clip();
    for (const se of s.series) {
      ctx.strokeStyle = se.color || "#555"; ctx.fillStyle = se.color || "#555";
      if (se.mode === "line") {
        ctx.lineWidth = 1.5; ctx.setLineDash(se.dash ? [4, 4] : []);
        ctx.beginPath();
        se.x.forEach((v, i) => (i ? ctx.lineTo(X(v), Y(se.y[i])) : ctx.moveTo(X(v), Y(se.y[i]))));
        ctx.stroke(); ctx.setLineDash([]);
      } else {
        se.x.forEach((v, i) => drawMarker(ctx, se.marker || "o", X(v), Y(se.y[i]), 5, se.color, true));
      }
    }
    if (s.marker && s.marker.x !== undefined && s.marker.x !== null) {
      const mx = X(s.marker.x);
      ctx.strokeStyle = "#000"; ctx.lineWidth = 1.2; ctx.setLineDash([5, 4]);
      ctx.beginPath(); ctx.moveTo(mx, ax.y); ctx.lineTo(mx, ax.y + ax.h); ctx.stroke(); ctx.setLineDash([]);
      if (s.marker.y !== undefined && s.marker.y !== null) {
        ctx.lineWidth = 2.5; drawMarker(ctx, s.marker.shape || "o", mx, Y(s.marker.y), 11, "#000", false);
      }
    }
    ctx.restore();
    ctx.strokeStyle = "#000"; ctx.lineWidth = 1; ctx.strokeRect(ax.x - 0.5, ax.y - 0.5, ax.w + 1, ax.h + 1);
    // legend (shapes tell the series apart, not colour alone)
    ctx.font = font(TICK_PX, false); ctx.textAlign = "left"; ctx.textBaseline = "middle";
    let ly = ax.y + 12;
    for (const se of s.series) {
      if (!se.label) continue;
      if (se.mode === "line") {
        ctx.strokeStyle = se.color || "#555"; ctx.lineWidth = 1.5; ctx.setLineDash(se.dash ? [4, 4] : []);
        ctx.beginPath(); ctx.moveTo(ax.x + 8, ly); ctx.lineTo(ax.x + 30, ly); ctx.stroke(); ctx.setLineDash([]);
      } else drawMarker(ctx, se.marker || "o", ax.x + 19, ly, 5, se.color, true);
      ctx.fillStyle = "#000"; ctx.fillText(se.label, ax.x + 36, ly);
      ly += TICK_PX + 6;
    }
    ctx.font = font(LABEL_PX, false); ctx.fillStyle = "#000";
    if (s.xlabel) { ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.fillText(s.xlabel, ax.x + ax.w / 2, ax.y + ax.h + TICK_PX + 10); }
    if (s.ylabel) {
      ctx.save(); ctx.translate(4, ax.y + ax.h / 2); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.fillText(fit(ctx, s.ylabel, ax.h), 0, 0); ctx.restore();
    }
    drawTitle(ctx, s.title, w / 2, 2, w - 8);
    return { ax, X, Y };
  },
  hit(s, info, x, y) {
    if (!info) return null;
    let best = null, bd = 15 * 15;
    const points = linePoints(s);   // the points the cursor walks too: the same read-out by mouse or keys
    s.series.forEach((se, k) => {
      if (!points.includes(k)) return;
      se.x.forEach((v, i) => {
        const d = (info.X(v) - x) ** 2 + (info.Y(se.y[i]) - y) ** 2;
        if (d < bd) { bd = d; best = { series: k, index: i }; }
      });
    });
    return best;
  },
  readout(s, hit) {
    const se = s.series[hit.series];
    return `${se.label || "series"}: ${s.xlabel ? s.xlabel.split(" ")[0] : "x"} = ${fmtExact(se.x[hit.index])}, ${fmtExact(se.y[hit.index])}`;
  },
  tables(s) {
    const xname = s.xlabel || "x", yname = s.ylabel || "value";
    const m = s.marker && s.marker.x !== undefined && s.marker.x !== null ? s.marker : null;
    const mark = !m ? "" : `. Marked: ${xname} = ${fmtExact(m.x)}`
      + (m.y !== undefined && m.y !== null ? `, ${yname} = ${fmtExact(m.y)}` : "");
    return s.series.filter((se) => se.x.length).map((se, k) => {
      const n = se.x.length;
      let ix = [...Array(n).keys()], part = "";
      if (n > TABLE_POINTS) {  // every k-th point, the last one too; the extremes in the caption
        const step = Math.ceil(n / TABLE_POINTS);
        ix = ix.filter((i) => i % step === 0 || i === n - 1);
        let lo = 0, hi = 0;
        se.y.forEach((v, i) => { if (v < se.y[lo]) lo = i; if (v > se.y[hi]) hi = i; });
        part = `. ${n} points: smallest ${fmtExact(se.y[lo])} at ${xname} = ${fmtExact(se.x[lo])}, largest `
          + `${fmtExact(se.y[hi])} at ${xname} = ${fmtExact(se.x[hi])}; shown: every ${step}th point and the last`;
      }
      return { caption: `${firstLine(s.title) || "Plot"}: ${se.label || yname}${part}${k === 0 ? mark : ""}`,
        corner: xname, cols: [yname], rows: ix.map((i) => [fmtExact(se.x[i]), fmtExact(se.y[i])]), rowIndex: ix };
    });
  },
  keys: "Left and right arrow keys move along the plotted points and read out each; up and down (or Page Up "
    + "and Page Down) change series.",
  cells(s) { return linePoints(s).map((k) => [1, s.series[k].x.length]); },
  cursor(s, info, hit, key) {
    const marked = linePoints(s);
    if (!marked.length) return null;
    if (!hit) {
      if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"].includes(key)) {
        return null;
      }
      // start at the point nearest the marker (the setting shown), on the first series with points
      const se = s.series[marked[0]], mx = s.marker && s.marker.x;
      let best = 0;
      if (mx !== undefined && mx !== null) {
        se.x.forEach((v, i) => { if (Math.abs(v - mx) < Math.abs(se.x[best] - mx)) best = i; });
      }
      return { series: marked[0], index: best };
    }
    let k = Math.max(0, marked.indexOf(hit.series));
    if (["ArrowUp", "ArrowDown", "PageUp", "PageDown"].includes(key)) {
      k = Math.min(marked.length - 1, Math.max(0, k + (key === "ArrowDown" || key === "PageDown" ? 1 : -1)));
      const se = s.series[marked[k]];
      return { series: marked[k], index: Math.min(hit.index, se.x.length - 1) };
    }
    const i = moveList(s.series[marked[k]].x.length, hit.index, key);
    return i === null ? null : { series: marked[k], index: i };
  },
  cellRect(s, info, hit) {
    const se = s.series[hit.series];
    return { x: info.X(se.x[hit.index]) - 8, y: info.Y(se.y[hit.index]) - 8, w: 16, h: 16 };
  },
};

// The series the cursor walks: the measured points (marker series); a plot of lines only, the lines' points.
function linePoints(s) {
  const withPoints = s.series.map((se, k) => k).filter((k) => s.series[k].x.length);
  const markers = withPoints.filter((k) => s.series[k].mode !== "line");
  return markers.length ? markers : withPoints;
}

function pow2Ticks(lo, hi) {
  const out = [];
  const step = Math.max(1, Math.ceil((hi - lo) / 10));
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e += step) out.push(2 ** e);
  return out;
}

function drawMarker(ctx, shape, x, y, r, color, filled) {
  ctx.beginPath();
  if (shape === "s") ctx.rect(x - r, y - r, 2 * r, 2 * r);
  else ctx.arc(x, y, r, 0, 2 * Math.PI);
  if (filled) { ctx.fillStyle = color || "#555"; ctx.fill(); ctx.strokeStyle = "#000"; ctx.lineWidth = 1; }
  ctx.stroke();
}

// ---------------- matrix product: A · B = C, drawn to scale
KINDS.product = {
  traits: ["a", "b", "c", "a_shape", "b_shape", "c_shape", "a_range", "b_range", "c_range", "a_rows", "a_cols",
    "b_rows", "b_cols", "c_rows", "c_cols", "a_title", "b_title", "c_title", "a_xlabel", "b_xlabel", "c_xlabel",
    "a_ylabel", "b_ylabel", "c_ylabel", "lut", "title", "alt", "width", "height", "max_cell", "colorbar_label"],
  async prepare(model) {
    const out = { ...common(model), lut: lutOf(model.get("lut")), maxCell: model.get("max_cell"),
      cbarLabel: model.get("colorbar_label"), panels: [] };
    for (const k of ["a", "b", "c"]) {
      const [rows, cols] = model.get(`${k}_shape`);
      const m = await decodeMatrix("f32", model.get(k));
      const [vmin, vmax] = model.get(`${k}_range`);
      out.panels.push({ key: k, rows, cols, m, vmin, vmax, rowText: model.get(`${k}_rows`),
        colText: model.get(`${k}_cols`), title: model.get(`${k}_title`), xlabel: model.get(`${k}_xlabel`),
        ylabel: model.get(`${k}_ylabel`) });
    }
    return out;
  },
  draw(ctx, s, w, h) {
    if (!s.lut) return null;
    const top = 2 + titleHeight(s.title);
    drawTitle(ctx, s.title, w / 2, 2, w - 8);
    const opW = 30, labelW = 70, cbarW = 70;
    // cell size: as large as max_cell, smaller when the panels would not fit the width or height
    const totalCols = s.panels.reduce((t, p) => t + p.cols, 0);
    const maxRows = Math.max(...s.panels.map((p) => p.rows));
    const fixed = 3 * (labelW + 10) + 2 * opW + cbarW;
    const titleH = 2 * (TITLE_PX + 4) + 6, bottomH = 2 * TICK_PX + LABEL_PX + 24;
    const cell = Math.max(0.5, Math.min(s.maxCell, (w - fixed) / totalCols, (h - top - titleH - bottomH) / maxRows));
    const used = s.panels.reduce((t, p) => t + labelW + p.cols * cell + 10, 0) + 2 * opW;
    let x = Math.max(4, (w - used) / 2);
    const lays = [];
    s.panels.forEach((p, k) => {
      const ax = { x: x + labelW, y: top + titleH, w: p.cols * cell, h: p.rows * cell };
      drawProductPanel(ctx, s, p, ax);
      lays.push(ax);
      x = ax.x + ax.w + 10;
      if (k < 2) {
        ctx.font = font(28, false); ctx.fillStyle = "#000"; ctx.textAlign = "center"; ctx.textBaseline = "middle";
        ctx.fillText(k === 0 ? "·" : "=", x + opW / 2, ax.y + Math.min(ax.h, maxRows * cell) / 2);
        x += opW;
      }
    });
    // shared colour scale note: each panel has its own range, shown under it
    return { lays };
  },
  hit(s, info, x, y) {
    if (!info) return null;
    for (let k = 0; k < 3; k++) {
      const ax = info.lays[k], p = s.panels[k];
      if (x >= ax.x && x < ax.x + ax.w && y >= ax.y && y < ax.y + ax.h) {
        return { panel: k, row: Math.floor((y - ax.y) / ax.h * p.rows), col: Math.floor((x - ax.x) / ax.w * p.cols) };
      }
    }
    return null;
  },
  readout(s, hit) {
    const p = s.panels[hit.panel];
    const v = p.m.data[hit.row * p.cols + hit.col];
    const name = String(p.title || "").split("\n")[0];
    return `${name}: row “${p.rowText[hit.row]}” (${hit.row}), column ${hit.col}: ${fmtExact(v)}`;
  },
  tables(s) {
    return s.panels.map((p) => matrixTable(p, `${firstLine(s.title) || "Product"}: ${firstLine(p.title)}; `
      + `rows: ${p.ylabel || "rows"}, columns: ${p.xlabel || "columns"}`));
  },
  keys: "Arrow keys move a cell cursor through the three matrices and read out each value.",
  cells(s) { return s.panels.map((p) => [p.rows, p.cols]); },
  cursor(s, info, hit, key) {
    return movePanels(s.panels.map((p) => ({ rows: p.rows, cols: p.cols })), hit, key);
  },
  cellRect(s, info, hit) {
    const ax = info.lays[hit.panel], p = s.panels[hit.panel];
    return { x: ax.x + hit.col * ax.w / p.cols, y: ax.y + hit.row * ax.h / p.rows, w: ax.w / p.cols, h: ax.h / p.rows };
  },
};

function drawProductPanel(ctx, s, p, ax) {
  const img = new ImageData(p.cols, p.rows);
  for (let i = 0; i < p.rows * p.cols; i++) {
    const c = colourIndex(p.m.data[i], p.vmin, p.vmax);
    img.data.set([s.lut[3 * c], s.lut[3 * c + 1], s.lut[3 * c + 2], 255], 4 * i);
  }
  const small = document.createElement("canvas"); small.width = p.cols; small.height = p.rows;
  small.getContext("2d").putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(small, ax.x, ax.y, ax.w, ax.h);
  ctx.strokeStyle = "#000"; ctx.lineWidth = 1; ctx.strokeRect(ax.x - 0.5, ax.y - 0.5, ax.w + 1, ax.h + 1);
  ctx.font = font(TICK_PX, false); ctx.fillStyle = "#000"; ctx.strokeStyle = "#333";
  // row labels, thinned to fit at 12 px
  const ch = ax.h / p.rows, cw = ax.w / p.cols;
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  const rowTicks = thin([...Array(p.rows).keys()], ch, TICK_PX + 1);
  for (const r of rowTicks) {
    const y = ax.y + (r + 0.5) * ch;
    ctx.fillText(fit(ctx, p.rowText[r] || "", 60), ax.x - 6, y);
    ctx.beginPath(); ctx.moveTo(ax.x - 4, y); ctx.lineTo(ax.x, y); ctx.stroke();
  }
  // column ticks: as many as fit, at round steps (every column, or 0, 8, 16, ...)
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  const widest = ctx.measureText(String(p.cols - 1)).width + 8;
  let step = 1;
  for (const st of [1, 2, 4, 8, 16, 32, 64, 128, 256]) { step = st; if (st * cw >= widest) break; }
  for (let c = 0; c < p.cols; c += step) {
    const x = ax.x + (c + 0.5) * cw;
    ctx.beginPath(); ctx.moveTo(x, ax.y + ax.h); ctx.lineTo(x, ax.y + ax.h + 4); ctx.stroke();
    ctx.fillText(p.colText[c] || String(c), x, ax.y + ax.h + 6);
  }
  ctx.font = font(LABEL_PX, false);
  if (p.xlabel) ctx.fillText(fit(ctx, p.xlabel, Math.max(ax.w + 60, 120)), ax.x + ax.w / 2, ax.y + ax.h + TICK_PX + 10);
  // range under the x label: "−2 … 2" with the colour ramp
  const ry = ax.y + ax.h + TICK_PX + LABEL_PX + 16;
  const rw = Math.max(Math.min(ax.w, 120), 60);
  const grad = ctx.createLinearGradient(ax.x + ax.w / 2 - rw / 2, 0, ax.x + ax.w / 2 + rw / 2, 0);
  for (let i = 0; i <= 8; i++) { const k = Math.round(i * 255 / 8); grad.addColorStop(i / 8, `rgb(${s.lut[3 * k]},${s.lut[3 * k + 1]},${s.lut[3 * k + 2]})`); }
  ctx.fillStyle = grad; ctx.fillRect(ax.x + ax.w / 2 - rw / 2, ry, rw, 8);
  ctx.fillStyle = "#000"; ctx.font = font(TICK_PX, false);
  ctx.textAlign = "right"; ctx.fillText(fmtNumber(p.vmin, 1), ax.x + ax.w / 2 - rw / 2 - 3, ry - 2);
  ctx.textAlign = "left"; ctx.fillText(fmtNumber(p.vmax, 1), ax.x + ax.w / 2 + rw / 2 + 3, ry - 2);
  if (p.ylabel) {
    ctx.save(); ctx.translate(ax.x - 66, ax.y + ax.h / 2); ctx.rotate(-Math.PI / 2);
    ctx.font = font(LABEL_PX, false); ctx.textAlign = "center"; ctx.textBaseline = "top";
    ctx.fillText(fit(ctx, p.ylabel, Math.max(ax.h, 80)), 0, 0); ctx.restore();
  }
  ctx.font = font(TITLE_PX, true); ctx.fillStyle = "#000"; ctx.textAlign = "center"; ctx.textBaseline = "bottom";
  const lines = String(p.title || "").split("\n").slice(0, 2);
  lines.forEach((line, k) => ctx.fillText(line, ax.x + ax.w / 2, ax.y - 6 - (lines.length - 1 - k) * (TITLE_PX + 4)));
}

// ------------------------------------------------------------------ render

function render({ model, el }) {
  const kind = KINDS[model.get("_kind")];
  const shell = makeShell(el, model, kind);
  const { canvas, overlay, readout, root, save, tableButton, tables } = shell;
  let state = null, info = null, hover = null, byKeys = false, seq = 0, frame = 0, scheduled = false;
  // The width the page gives the figure, kept by the ResizeObserver below (-1: not known yet): a redraw
  // after a slider moved reads no layout, so it never forces the page's layout inside the frame.
  let room = -1, resize = null;

  // A sentence for the explorer's live region (access.js); a figure on its own says it in its read-out.
  function announce(text) {
    if (!text) return;
    const heard = !el.dispatchEvent(new CustomEvent("lessons-announce",
      { detail: { text }, bubbles: true, cancelable: true }));
    if (!heard) readout.setAttribute("role", "status");
    return heard;
  }

  function paint() {
    scheduled = false;
    if (!state) return;
    // As wide as asked, never wider than the room the page gives it (a narrow window, zoom, an open side
    // panel). In a row of figures it may shrink to 80 % of that; below, the row wraps (explorers' rows
    // wrap), so at 200 % zoom each figure gets the full width, not half of it.
    if (el.dataset.width !== String(state.width)) {
      el.dataset.width = String(state.width);
      el.style.width = `${state.width}px`;
      el.style.maxWidth = `min(${state.width}px, 100%)`;
      // in a row (HBox) the basis is the width asked for; in a column (VBox) a basis would be a height
      const parent = el.parentElement;
      const inColumn = parent && getComputedStyle(parent).flexDirection.startsWith("column");
      el.style.flex = inColumn ? "0 0 auto" : `1 1 ${Math.round(0.8 * state.width)}px`;
      room = -1;  // its size just changed: measure it now
    }
    if (room < 0 || !resize) room = Math.floor(el.getBoundingClientRect().width);
    const w = room > 120 ? Math.min(state.width, room) : state.width, h = state.height;
    root.style.width = `${w}px`;
    const ctx = setupCanvas(canvas, w, h);
    systemInk(ctx, root);
    ctx.clearRect(0, 0, w, h);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, w, h);
    try {
      info = kind.draw(ctx, state, w, h);
    } catch (err) {
      info = null;
      ctx.fillStyle = "#b00020"; ctx.font = font(TICK_PX, true); ctx.textAlign = "left"; ctx.textBaseline = "top";
      ctx.fillText(`could not draw: ${err}`, 8, 8);
      console.error("lessons_lib live figure:", err);
    }
    setupCanvas(overlay, w, h);
    drawHover();
    frame += 1;
    const name = state.alt || state.title || "";
    canvas.setAttribute("aria-label", name);
    save.setAttribute("aria-label", `Save as PNG: ${(state.title || name).split("\n")[0]}`);
    if (!tables.hidden) fillTables();
    root.dataset.frame = String(frame);
    root.dataset.alt = name;
    root.dataset.drawnAt = String(performance.now());
    // what the cursor can reach (for tests and tools): [[rows, cols] per panel]
    root.dataset.cells = kind.cells && info ? JSON.stringify(kind.cells(state)) : "";
    // where the cells are (for tests and tools): the axes rectangle of a single heatmap
    if (info && info.lay) {
      const { ax } = info.lay;
      root.dataset.axes = JSON.stringify({ x: ax.x, y: ax.y, w: ax.w, h: ax.h,
        rows: state.rows, cols: state.cols });
    }
  }

  function schedule() {
    if (!scheduled) { scheduled = true; requestAnimationFrame(paint); }
  }

  // The numbers as tables: built from the state drawn, once per new state, only while they are shown.
  let tabled = null;
  function fillTables() {
    if (!state || tabled === state || !kind.tables) return;
    tabled = state;
    let made = [];
    try {
      made = kind.tables(state) || [];
    } catch (err) {
      console.error("lessons_lib live figure table:", err);
    }
    tables.replaceChildren(...made.map(tableElement));
    tables.setAttribute("aria-label", `Numbers of: ${firstLine(state.title) || "the figure"}`);
    tables.dataset.frame = String(frame);
  }
  tableButton.addEventListener("click", () => {
    const open = tables.hidden;
    tables.hidden = !open;
    tableButton.setAttribute("aria-expanded", String(open));
    if (open) { tabled = null; fillTables(); } else tables.replaceChildren();
    const n = tables.querySelectorAll("table").length;
    const text = open ? `${n === 1 ? "A table" : `${n} tables`} of the figure's numbers shown under it`
      : "Table of the figure's numbers hidden";
    if (!announce(text)) readout.textContent = text;  // a figure on its own says it in its read-out
  });

  // Every change: decode the latest state; only the newest decoded state is drawn.
  function refresh() {
    const mine = ++seq;
    kind.prepare(model).then((s) => {
      if (mine !== seq) return;  // a newer state is on its way: skip this one
      const before = state;
      state = s;
      // a keyboard cursor stays on its cell while the cell exists (its read-out shows the new value)
      if (hover && kind.hit) {
        hover = byKeys && cursorFits(kind, s, hover) ? hover : kind.keepHover ? kind.keepHover(s, hover) : null;
      }
      if (!hover) byKeys = false;
      if (before && kind.heard) announce(kind.heard(before, s));
      schedule();
    }).catch((err) => console.error("lessons_lib live figure:", err));
  }

  function drawHover() {
    const ctx = overlay.getContext("2d");
    const r = window.devicePixelRatio || 1;
    ctx.setTransform(r, 0, 0, r, 0, 0);
    ctx.clearRect(0, 0, overlay.width, overlay.height);
    // the cursor's cell and its rectangle in the canvas (for tests and tools)
    root.dataset.cursor = hover && byKeys && info && state ? JSON.stringify(hover) : "";
    if (!hover || !info || !state) { readout.textContent = "\u00a0"; return; }
    const rect = kind.cellRect(state, info, hover);
    drawFrame(ctx, rect);
    if (byKeys) root.dataset.cursorRect = JSON.stringify(rect);
    readout.textContent = kind.readout(state, hover);
  }

  function pointer(ev) {
    const b = canvas.getBoundingClientRect();
    return [ev.clientX - b.left, ev.clientY - b.top];
  }
  overlay.addEventListener("mousemove", (ev) => {
    if (!state || !info) return;
    const [x, y] = pointer(ev);
    const hit = kind.hit(state, info, x, y);
    if (JSON.stringify(hit) !== JSON.stringify(hover)) {
      hover = hit; byKeys = false;
      drawHover();
      if (kind.hoverModel) kind.hoverModel(model, hit);
    }
  });
  overlay.addEventListener("mouseleave", () => {
    if (byKeys) return;
    hover = null; drawHover();
    if (kind.hoverModel) kind.hoverModel(model, null);
  });
  overlay.addEventListener("click", (ev) => {
    if (!state || !info || !kind.click) return;
    const [x, y] = pointer(ev);
    if (document.activeElement !== canvas && canvas.tabIndex >= 0) canvas.focus({ preventScroll: true });
    kind.click(model, state, kind.hit(state, info, x, y));
  });

  // The keyboard: arrows (and Home, End, PageUp, PageDown) move the cell cursor, its read-out is shown
  // and said; Enter or Space does what a click on that cell does; Escape hides the cursor.
  canvas.addEventListener("keydown", (ev) => {
    if (!state || !info || !kind.cursor || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === "Enter" || ev.key === " ") {
      if (hover && byKeys && kind.click) {
        ev.preventDefault(); ev.stopPropagation();
        kind.click(model, state, hover);
      }
      return;
    }
    if (ev.key === "Escape") {
      if (byKeys) { hover = null; byKeys = false; drawHover(); if (kind.hoverModel) kind.hoverModel(model, null); }
      return;
    }
    const next = kind.cursor(state, info, byKeys ? hover : null, ev.key);
    if (!next) return;
    ev.preventDefault(); ev.stopPropagation();
    hover = next; byKeys = true;
    drawHover();
    if (kind.hoverModel) kind.hoverModel(model, next);
    announce(readout.textContent);
  });
  canvas.addEventListener("blur", () => {
    if (!byKeys) return;
    hover = null; byKeys = false; drawHover();
    if (kind.hoverModel) kind.hoverModel(model, null);
  });

  // All traits of one kernel message change together: decode once, after the last of them.
  let queued = false;
  function changed() {
    if (!queued) { queued = true; queueMicrotask(() => { queued = false; refresh(); }); }
  }
  const handlers = kind.traits.map((t) => [`change:${t}`, changed]);
  for (const [ev, fn] of handlers) model.on(ev, fn);
  refresh();
  // high contrast switched on or off, or its theme from dark to light: paint again
  const themes = [FORCED_COLOURS, "(prefers-color-scheme: dark)"].map((q) => matchMedia(q));
  for (const t of themes) t.addEventListener("change", schedule);
  if (typeof ResizeObserver !== "undefined") {
    resize = new ResizeObserver(() => {
      const now = Math.floor(el.getBoundingClientRect().width);
      if (now !== room) { room = now; schedule(); }
    });
    resize.observe(el);
  }
  return () => {
    for (const [ev, fn] of handlers) model.off(ev, fn);
    for (const t of themes) t.removeEventListener("change", schedule);
    if (resize) resize.disconnect();
  };
}

export default { render };
// for tests and tools (tests/figures/test_figure_tables.py runs them in node): each kind's tables
export { KINDS };

// ---------------- attention heads: thumbnails, a large preview, one token's row or column
// (Python: lessons_lib/figures/live/heads.py, HeadView; notebook 06). Hover a thumbnail to preview it
// large, click it to lock it (click again to unlock); click a token in the preview to follow it.
// `direction` 0 frames the token's row (where it looks), 1 its column (who looks at it), in every
// head. Hover, preview and frames are drawn here: no kernel round trip (hover is not even sent).
function frameCells(ctx, ax, rows, cols, index, column) {
  if (index < 0 || index >= (column ? cols : rows)) return;
  const cw = ax.w / cols, ch = ax.h / rows;
  const r = column ? { x: ax.x + index * cw, y: ax.y, w: cw, h: ax.h } : { x: ax.x, y: ax.y + index * ch, w: ax.w, h: ch };
  if (Math.min(r.w, r.h) > 10) {  // large cells: a black frame inside, with a white line within it
    ctx.lineWidth = 3; ctx.strokeStyle = "#000";
    ctx.strokeRect(r.x + 1.5, r.y + 1.5, r.w - 3, r.h - 3);
    ctx.lineWidth = 1; ctx.strokeStyle = "#fff";
    ctx.strokeRect(r.x + 3.5, r.y + 3.5, r.w - 7, r.h - 7);
  } else {  // thumbnails: the frame just outside the cells, so their colours stay visible
    ctx.lineWidth = 1.5; ctx.strokeStyle = "#000";
    ctx.strokeRect(r.x - 0.75, r.y - 0.75, r.w + 1.5, r.h + 1.5);
  }
}

function headShown(s) {
  if (s.hovered >= 0 && s.hovered < s.n) return { k: s.hovered, why: "hover" };
  if (s.locked >= 0 && s.locked < s.n) return { k: s.locked, why: "locked" };
  return { k: 0, why: "" };
}

// What head k shows for the token followed, in words: where it looks most (its row), or who looks at it
// most (its column), with the weight: "“sat” (2) looks most at “mat” (5), 0.62".
function followed(s, k) {
  const t = s.token, column = s.direction === 1, per = s.rows * s.cols;
  if (!(t >= 0 && t < s.rows)) return "";
  let best = -1, bestValue = -Infinity, approx = false;
  for (let j = 0; j < (column ? s.rows : s.cols); j++) {
    const cell = column ? j * s.cols + t : t * s.cols + j;
    if (s.mask && s.mask[cell]) continue;
    const { value, approx: a } = cellValue(s.m, k * per + cell, s.vmin, s.vmax);
    if (value > bestValue) { bestValue = value; best = j; approx = a; }
  }
  if (best < 0) return `“${s.rowText[t]}” (${t}) attends to nothing`;
  const weight = `${approx ? "about " : ""}${fmtNumber(bestValue, 2)}`;
  return column ? `“${s.rowText[best]}” (${best}) looks at “${s.colText[t]}” (${t}) most, ${weight}`
    : `“${s.rowText[t]}” (${t}) looks most at “${s.colText[best]}” (${best}), ${weight}`;
}

function headName(s, k) { return s.panelTitles[k] || `head ${k}`; }

KINDS.heads = {
  traits: ["values", "encoding", "shape", "mask", "row_labels", "col_labels", "row_ticks", "col_ticks",
    "vmin", "vmax", "lut", "title", "panel_titles", "colorbar_label", "decimals", "percent", "locked",
    "hovered", "token", "direction", "hidden_text", "alt", "width", "height", "xlabel", "ylabel"],
  async prepare(model) {  // the grid's matrices, labels and colours, plus the head view's own state
    const s = await KINDS.grid.prepare(model);
    const token = model.get("token"), direction = model.get("direction");
    const out = { ...s, locked: model.get("locked"), hovered: model.get("hovered"), token, direction };
    // the name follows what is shown: the head shown large and what it does for the token followed
    const shown = headShown(out);
    const what = !out.n ? "" : `${headName(out, shown.k)} shown large${shown.why === "locked" ? " (locked)" : ""}: `
      + `${followed(out, shown.k)}; token = ${token}, ${direction === 1 ? "its column" : "its row"} framed`;
    out.alt = s.alt ? `${s.alt}; ${what}` : what;
    return out;
  },
  tables(s) { return panelTables(s, s.locked); },
  keys: "Arrow keys move a cell cursor through the heads' thumbnails, show that head large and read out "
    + "each weight; Page Up and Page Down change head; Enter locks or unlocks the head.",
  cells(s) { return Array.from({ length: s.n }, () => [s.rows, s.cols]); },
  cursor(s, info, hit, key) {
    const panels = Array.from({ length: s.n }, () => ({ rows: s.rows, cols: s.cols }));
    const column = s.direction === 1;
    const start = { panel: headShown(s).k, row: column ? 0 : s.token, col: column ? s.token : 0 };
    const m = movePanels(panels, hit && hit.thumb ? hit : null, key, start);
    return m && { ...m, thumb: true };
  },
  // said when the learner locks a head, or follows another token or direction (all in the browser)
  heard(b, s) {
    if (!s.n || b.n !== s.n || b.rows !== s.rows) return "";  // new weights: the explorer says what changed
    if (b.locked !== s.locked) {
      if (s.locked >= 0 && s.locked < s.n) return `${headName(s, s.locked)} locked: ${followed(s, s.locked)}.`;
      return `${headName(s, b.locked)} unlocked: ${headName(s, headShown(s).k)} shown.`;
    }
    if (b.token !== s.token || b.direction !== s.direction) {
      const k = headShown(s).k;
      return `token = ${s.token}, ${s.direction === 1 ? "its column" : "its row"}: in ${headName(s, k)}, `
        + `${followed(s, k)}.`;
    }
    return "";
  },
  draw(ctx, s, w, h) {
    if (!s.lut || !s.n) return null;
    const top = 2 + titleHeight(s.title);
    if (s.title) drawTitle(ctx, s.title, w / 2, 2, w - 8);
    const per = s.rows * s.cols;
    const sub = (k) => ({ kind: s.m.kind, data: s.m.data.subarray(k * per, (k + 1) * per) });
    const column = s.direction === 1;
    const shown = headShown(s);
    // left: one thumbnail per head, in a fixed area (more heads: smaller thumbnails, nothing moves)
    const leftW = Math.floor(0.42 * w), labelH = TICK_PX + 6, gap = 8;
    // as many columns as give the largest thumbnails in that area
    let ncol = 1, side = 0;
    for (let c = 1; c <= s.n; c++) {
      const sd = Math.min((leftW - 4) / c - gap, (h - top - 4) / Math.ceil(s.n / c) - labelH - gap);
      if (sd > side) { side = sd; ncol = c; }
    }
    side = Math.max(8, Math.floor(side));
    const thumbs = [];
    for (let k = 0; k < s.n; k++) {
      const x0 = 4 + (k % ncol) * (side + gap), y0 = top + Math.floor(k / ncol) * (side + labelH + gap);
      const ax = { x: x0 + 2, y: y0 + labelH, w: side, h: side };
      const p = { ...s, m: sub(k), highlightRow: -1, annotate: false, colorbar: false, showTitle: false,
        showRowLabels: false, showColLabels: false, xlabel: "", ylabel: "", maskNote: false };
      const lay = drawHeatmapPanel(ctx, p, { x: ax.x, y: ax.y - 2, w: side, h: side + 8 });
      const a = lay.ax;
      ctx.font = font(TICK_PX, k === shown.k); ctx.fillStyle = "#000"; ctx.textAlign = "left";
      ctx.textBaseline = "bottom";
      const tag = k === s.locked ? " · locked" : "";
      ctx.fillText(fit(ctx, `${s.panelTitles[k] || "head " + k}${tag}`, side + 6), a.x, a.y - 3);
      if (k === shown.k) {  // the previewed head: a thick frame around the thumbnail
        ctx.lineWidth = 3; ctx.strokeStyle = "#000"; ctx.strokeRect(a.x - 3, a.y - 3, a.w + 6, a.h + 6);
      }
      frameCells(ctx, a, s.rows, s.cols, s.token, column);
      thumbs.push({ k, lay, p });
    }
    // right: the previewed head, large, with token labels and the colour scale
    const box = { x: leftW + 12, y: top, w: w - leftW - 16, h: h - top - 4 };
    const why = shown.why === "locked" ? " (locked: click its thumbnail to unlock)"
      : shown.why === "hover" ? " (preview)" : " (hover or arrow keys: preview; click or Enter: lock)";
    const p = { ...s, m: sub(shown.k), title: `${s.panelTitles[shown.k] || "head " + shown.k}${why}`,
      highlightRow: column ? -1 : s.token, annotate: false, maskNote: s.anyMasked };
    const lay = drawHeatmapPanel(ctx, p, box);
    if (column) frameCells(ctx, lay.ax, s.rows, s.cols, s.token, true);
    return { thumbs, preview: { k: shown.k, lay, p } };
  },
  hit(s, info, x, y) {
    if (!info) return null;
    for (const { k, lay, p } of info.thumbs) {
      const { ax } = lay;
      if (x >= ax.x - 3 && x < ax.x + ax.w + 3 && y >= ax.y - TICK_PX - 6 && y < ax.y + ax.h + 3) {
        const r = Math.min(p.rows - 1, Math.max(0, Math.floor((y - ax.y) / ax.h * p.rows)));
        const c = Math.min(p.cols - 1, Math.max(0, Math.floor((x - ax.x) / ax.w * p.cols)));
        return { panel: k, row: r, col: c, thumb: true };
      }
    }
    const { k, lay, p } = info.preview;
    const { ax } = lay;
    if (y >= ax.y + ax.h && y < ax.y + ax.h + lay.colH && x >= ax.x && x < ax.x + ax.w) {
      return { panel: k, row: -1, col: Math.floor((x - ax.x) / ax.w * p.cols), label: true };
    }
    const hit = heatmapHit(p, lay, x, y);
    // elsewhere on the figure: not a cell, but the preview stays (the pointer may be on its way to it)
    return hit ? { ...hit, panel: k, label: hit.col < 0 } : { panel: -1, row: -1, col: -1, empty: true };
  },
  readout(s, hit) {
    if (hit.empty) return "hover a thumbnail to preview its head, click it to lock; hover a cell for its weight";
    const name = s.panelTitles[hit.panel] || `head ${hit.panel}`;
    if (hit.label) {
      const t = hit.col >= 0 ? hit.col : hit.row, text = hit.col >= 0 ? s.colText[t] : s.rowText[t];
      return `${name}: token “${text}” (${t}): click to follow it in every head`;
    }
    const p = { ...s, m: { kind: s.m.kind, data: s.m.data.subarray(hit.panel * s.rows * s.cols) } };
    const cell = heatmapReadout(p, hit);
    const lock = hit.panel === s.locked ? "unlock" : "lock";
    return `${name}: ${cell}${hit.thumb ? ` (click or Enter: ${lock} this head)` : ""}`;
  },
  cellRect(s, info, hit) {
    if (hit.empty) return { x: -10, y: -10, w: 0, h: 0 };
    const lay = hit.thumb ? info.thumbs[hit.panel].lay : info.preview.lay;
    const { ax } = lay;
    if (hit.row < 0) return { x: ax.x + hit.col * ax.w / s.cols, y: ax.y, w: ax.w / s.cols, h: ax.h };
    if (hit.col < 0) return { x: ax.x, y: ax.y + hit.row * ax.h / s.rows, w: ax.w, h: ax.h / s.rows };
    return { x: ax.x + hit.col * ax.w / s.cols, y: ax.y + hit.row * ax.h / s.rows, w: ax.w / s.cols, h: ax.h / s.rows };
  },
  // A hover that only changed the preview stays (the thumbnails do not move); new sizes drop it.
  keepHover(s, hit) {
    return hit.empty || (hit.panel < s.n && hit.row < s.rows && hit.col < s.cols) ? hit : null;
  },
  // The previewed head follows the thumbnail under the pointer and stays while the pointer crosses
  // to the preview; it goes back to the locked head when the pointer leaves the figure.
  hoverModel(model, hit) {
    const k = !hit ? -1 : hit.thumb ? hit.panel : model.get("hovered");
    if (model.get("hovered") !== k) model.set("hovered", k);  // local only: the kernel never hears of hover
  },
  click(model, s, hit) {
    if (!hit || hit.empty) return;
    if (hit.thumb) {
      model.set("locked", model.get("locked") === hit.panel ? -1 : hit.panel);
      model.set("hovered", -1);
    } else {
      const t = hit.label ? Math.max(hit.row, hit.col) : s.direction === 1 ? hit.col : hit.row;
      if (t < 0) return;
      model.set("token", t);
    }
    model.save_changes();
  },
};

// ---------------- rotating pairs: RoPE's dials (Python: lessons_lib/figures/live/rotations.py, notebook 11)
// One dial per pair of a head's dimensions: the query's 2-D piece (solid, filled head) turned by m·θ, the key's
// (dashed, open head) by n·θ, on one scale; under each dial θ and what the pair adds to the score. Colour
// never alone: the two arrows differ by line and head, and the legend names them.
const { query_mark: QUERY_MARK, key_mark: KEY_MARK } = STYLE;

function rotationLayout(s, w, h) {
  const top = 2 + titleHeight(s.title) + TICK_PX + 10;    // the title, then the legend
  const n = s.dials.length, cols = Math.max(1, Math.min(s.columns, n)), rows = Math.max(1, Math.ceil(n / cols));
  const cw = (w - 8) / cols, ch = (h - top - 4) / rows;
  const labelH = TICK_PX + 4;
  const r = Math.max(6, Math.min(cw / 2 - 6, (ch - 2 * labelH - 10) / 2));
  return { top, cols, rows, cw, ch, labelH, r };
}

function dialArrow(ctx, cx, cy, x, y, colour, dashed) {
  const len = Math.hypot(x, y);
  ctx.strokeStyle = colour; ctx.fillStyle = colour; ctx.lineWidth = 2;
  ctx.setLineDash(dashed ? [4, 3] : []);
  ctx.beginPath(); ctx.moveTo(cx, cy); ctx.lineTo(cx + x, cy - y); ctx.stroke();
  ctx.setLineDash([]);
  if (len < 3) return;
  const ux = x / len, uy = -y / len, head = Math.min(9, 0.45 * len);
  const bx = cx + x - ux * head, by = cy - y - uy * head;
  ctx.beginPath();
  ctx.moveTo(cx + x, cy - y);
  ctx.lineTo(bx - uy * head * 0.5, by + ux * head * 0.5);
  ctx.lineTo(bx + uy * head * 0.5, by - ux * head * 0.5);
  ctx.closePath();
  if (dashed) ctx.stroke(); else ctx.fill();
}

function radians(v) { return fmtNumber(v, Math.abs(v) < 10 ? 2 : 1); }

KINDS.rotations = {
  traits: ["dials", "columns", "title", "alt", "width", "height"],
  async prepare(model) {
    return { ...common(model), dials: model.get("dials") || [], columns: model.get("columns") };
  },
  draw(ctx, s, w, h) {
    if (!s.dials.length) return null;
    drawTitle(ctx, s.title, w / 2, 2, w - 8);
    const lay = rotationLayout(s, w, h);
    // legend: what the two arrows are
    const ly = lay.top - TICK_PX / 2 - 6;
    ctx.font = font(TICK_PX, false); ctx.textAlign = "left"; ctx.textBaseline = "middle";
    dialArrow(ctx, 10, ly, 26, 0, QUERY_MARK, false);
    ctx.fillStyle = "#000"; ctx.fillText("query, turned by m·θ", 42, ly);
    const kx = 46 + ctx.measureText("query, turned by m·θ").width + 16;
    dialArrow(ctx, kx, ly, 26, 0, KEY_MARK, true);
    ctx.fillStyle = "#000"; ctx.fillText("key, turned by n·θ", kx + 32, ly);
    let reach = 0;
    for (const d of s.dials) reach = Math.max(reach, Math.hypot(...d.q), Math.hypot(...d.k));
    reach = reach || 1;
    const centres = [];
    s.dials.forEach((d, i) => {
      const col = i % lay.cols, row = Math.floor(i / lay.cols);
      const cx = 4 + (col + 0.5) * lay.cw, cy = lay.top + row * lay.ch + lay.labelH + 2 + lay.r;
      centres.push({ cx, cy });
      ctx.strokeStyle = "#e3e3e3"; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(cx - lay.r, cy); ctx.lineTo(cx + lay.r, cy); ctx.moveTo(cx, cy - lay.r);
      ctx.lineTo(cx, cy + lay.r); ctx.stroke();
      ctx.strokeStyle = "#767676"; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.arc(cx, cy, lay.r, 0, 2 * Math.PI); ctx.stroke();
      const scale = lay.r / reach;
      dialArrow(ctx, cx, cy, d.q[0] * scale, d.q[1] * scale, QUERY_MARK, false);
      dialArrow(ctx, cx, cy, d.k[0] * scale, d.k[1] * scale, KEY_MARK, true);
      ctx.fillStyle = "#000"; ctx.font = font(TICK_PX, false); ctx.textAlign = "center";
      ctx.textBaseline = "bottom";
      ctx.fillText(fit(ctx, `pair ${i} · θ ${fmtExact(d.theta)}`, lay.cw - 4), cx, cy - lay.r - 2);
      ctx.textBaseline = "top";
      ctx.fillText(fit(ctx, `adds ${fmtNumber(d.add, 2)}`, lay.cw - 4), cx, cy + lay.r + 3);
    });
    return { grid: lay, centres };  // not `lay`: paint reads a heatmap's axes from that
  },
  hit(s, info, x, y) {
    if (!info) return null;
    const lay = info.grid;
    const col = Math.floor((x - 4) / lay.cw), row = Math.floor((y - lay.top) / lay.ch);
    if (col < 0 || col >= lay.cols || row < 0 || row >= lay.rows) return null;
    const i = row * lay.cols + col;
    return i < s.dials.length ? { index: i } : null;
  },
  readout(s, hit) {
    const d = s.dials[hit.index];
    return `pair ${hit.index} (dimensions ${d.dims[0]} and ${d.dims[1]}): θ = ${fmtExact(d.theta)} radians per `
      + `position; the query turned ${radians(d.q_turn)} rad, the key ${radians(d.k_turn)} rad; `
      + `this pair adds ${fmtNumber(d.add, 3)} to the score`;
  },
  tables(s) {
    const rows = s.dials.map((d, i) => [`pair ${i}`, `${d.dims[0]} and ${d.dims[1]}`, fmtExact(d.theta),
      radians(d.q_turn), radians(d.k_turn), fmtNumber(d.add, 3)]);
    return [{ caption: `${firstLine(s.title) || "Rotary embeddings"}: one row per pair of dimensions`,
      corner: "pair", cols: ["dimensions", "θ (radians per position)", "query turned by (radians)",
        "key turned by (radians)", "adds to the score"], rows }];
  },
  keys: "Left and right arrow keys move from dial to dial, up and down by a row, and read out each pair.",
  cells(s) { return [[1, s.dials.length]]; },
  cursor(s, info, hit, key) {
    const n = s.dials.length, cols = info ? info.grid.cols : 1;
    if (!hit) return moveList(n, null, key) === null ? null : { index: 0 };
    if (key === "ArrowUp") return { index: Math.max(0, hit.index - cols) };
    if (key === "ArrowDown") return { index: Math.min(n - 1, hit.index + cols) };
    const i = moveList(n, hit.index, key);
    return i === null ? null : { index: i };
  },
  cellRect(s, info, hit) {
    const lay = info.grid, c = info.centres[hit.index];
    return { x: c.cx - lay.cw / 2 + 2, y: c.cy - lay.r - lay.labelH - 2, w: lay.cw - 4, h: 2 * lay.r + 2 * lay.labelH + 6 };
  },
};
