// What a screen reader needs from a group of the course's widgets (an explorer, a quiz) and ipywidgets
// does not give (Python: lessons_lib/figures/live/access.py, Access): one polite live region, and the
// names, value texts and states of the controls. No dependencies, no build step, nothing fetched.
//
// The widget finds its group's box (`scope`, e.g. ".lessons-explorer") among its ancestors; for each
// entry of `controls` ({cls, label, value, options, status}) it names the elements of that CSS class,
// and keeps what it sets true while the controls move (a MutationObserver: ipywidgets' slider rewrites
// its handle's aria-valuetext with the slider's position on every move).

function setAttr(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

let groups = 0;  // radio groups named so far (each gets its own `name`)

// The arrow keys belong to the control that has focus (a slider, a radio group, a figure's cell cursor),
// not to the notebook, whose command mode binds them to "move to the cell above / below" with the selector
// ".jp-Notebook.jp-mod-commandMode:not(.jp-mod-readWrite) :focus". Notebook 7 handles shortcuts before
// the focused element sees the key (JupyterLab after it, so a control that handles the key wins there).
// So, once per page, a listener that runs first marks the focused element of a course box (an Access's
// box) `data-lm-suppress-shortcuts` for that one key press: lumino skips its shortcuts for it. Space,
// Enter and every other key keep their shortcuts (a presenter's Space still turns the slide).
const ARROWS = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"]);
if (!window.__lessonsArrowGuard) {
  window.__lessonsArrowGuard = true;
  window.addEventListener("keydown", (ev) => {
    const target = ev.target;
    if (!ARROWS.has(ev.key) || ev.ctrlKey || ev.metaKey || ev.altKey || !(target instanceof Element)) return;
    if (!target.closest("[data-lessons-keys]") || target.hasAttribute("data-lm-suppress-shortcuts")) return;
    target.setAttribute("data-lm-suppress-shortcuts", "true");
    setTimeout(() => target.removeAttribute("data-lm-suppress-shortcuts"), 0);
  }, true);
}

// A slider: its handle is named and says "d_k = 4" (the value its read-out shows, not the position).
function slider(node, c) {
  const handle = node.querySelector(".noUi-handle");
  if (!handle) return;
  if (c.label) setAttr(handle, "aria-label", c.label);
  const readout = node.querySelector(".widget-readout");
  const shown = readout && readout.textContent.trim() ? readout.textContent.trim()
    : handle.getAttribute("aria-valuenow");
  if (c.value && shown !== null) setAttr(handle, "aria-valuetext", `${c.value} = ${shown}`);
  // the editable number beside the slider (read from its attribute: isContentEditable would force the
  // page's style to be recomputed on every move, inside the key press, before the kernel's answer is read)
  if (readout && readout.getAttribute("contenteditable") === "true") {
    setAttr(readout, "role", "textbox");
    setAttr(readout, "aria-label", `${c.label || c.value}: type a value`);
  }
}

function pressed(button) {
  setAttr(button, "aria-pressed", button.classList.contains("mod-active") ? "true" : "false");
}

function name(node, c) {
  if (node.querySelector(".noUi-handle")) { slider(node, c); return; }
  if (c.status) {
    setAttr(node, "role", "status"); setAttr(node, "aria-live", "polite"); setAttr(node, "aria-atomic", "true");
  }
  const radios = [...node.querySelectorAll('input[type="radio"]')];
  if (radios.length) {
    const group = node.querySelector(".widget-radio-box") || node;
    setAttr(group, "role", "radiogroup");
    if (c.label) setAttr(group, "aria-label", c.label);
    // one `name` for the group's radios (ipywidgets gives none): one Tab stop, arrow keys pick an option
    if (!group.dataset.radioName) group.dataset.radioName = `lessons-radio-${++groups}-${Date.now() % 100000}`;
    radios.forEach((r, i) => {
      setAttr(r, "name", group.dataset.radioName);
      if (c.options[i]) setAttr(r, "aria-label", c.options[i]);
    });
    return;
  }
  if (node.classList.contains("widget-toggle-button")) {  // one ToggleButton
    if (c.label) setAttr(node, "aria-label", c.label);
    pressed(node);
    return;
  }
  const toggles = node.querySelectorAll(".widget-toggle-button");
  if (toggles.length) {  // a row of ToggleButtons: a named group, each button pressed or not
    setAttr(node, "role", "group");
    if (c.label) setAttr(node, "aria-label", c.label);
    toggles.forEach(pressed);
    return;
  }
  const field = node.matches("select, input, button") ? node : node.querySelector("select, input, button");
  if (field && c.label) setAttr(field, "aria-label", c.label);
}

function render({ model, el }) {
  el.classList.add("lessons-access");
  const region = document.createElement("div");
  region.className = "lessons-live-region";
  region.setAttribute("role", "status");
  region.setAttribute("aria-live", "polite");
  region.setAttribute("aria-atomic", "true");
  region.textContent = model.get("text");  // the first state: there, not announced
  region.dataset.said = "0";
  el.appendChild(region);

  // Debounced: what arrives while a control still moves replaces what waits; the region changes once,
  // `delay_ms` after the last change (never once per animation frame).
  let timer = 0;
  function say(text) {
    clearTimeout(timer);
    timer = setTimeout(() => {
      region.textContent = text;
      region.dataset.said = String(Number(region.dataset.said) + 1);
      region.dataset.saidAt = String(performance.now());
    }, model.get("delay_ms"));
  }
  const onText = () => say(model.get("text"));
  model.on("change:text", onText);

  let box = null, observer = null, tries = 0, stopped = false;
  const onAnnounce = (ev) => {
    if (!ev.detail || typeof ev.detail.text !== "string") return;
    ev.preventDefault();  // heard: the figure need not speak for itself
    say(ev.detail.text);
  };
  function apply() {
    for (const c of model.get("controls")) {
      for (const node of box.querySelectorAll(`.${c.cls}`)) name(node, c);
    }
  }
  // The box is an ancestor once the front end has put this widget into the page.
  function attach() {
    if (stopped) return;
    box = el.closest(model.get("scope"));
    if (!box) {
      if (tries++ < 600) setTimeout(attach, 50);
      return;
    }
    box.addEventListener("lessons-announce", onAnnounce);
    box.setAttribute("data-lessons-keys", "");  // its controls keep their arrow keys (ARROWS, above)
    apply();
    observer = new MutationObserver(apply);
    observer.observe(box, { subtree: true, childList: true, characterData: true, attributes: true,
      attributeFilter: ["class", "aria-valuetext", "name"] });
    model.on("change:controls", apply);
  }
  attach();
  return () => {
    stopped = true;
    clearTimeout(timer);
    model.off("change:text", onText);
    if (observer) observer.disconnect();
    if (box) { box.removeEventListener("lessons-announce", onAnnounce); model.off("change:controls", apply); }
  };
}

export default { render };
