// Explore's stepper: the step bar, the attention picture (every view), the output so far and the next-token
// bars, drawn in the browser from one packed run (app/render/stepper/__init__.py: pack). Stepping by button, key,
// slider or autoplay redraws here and sends nothing to the server. The step reaches the server (setStateValue)
// only when the page needs it: just before a click anywhere else on the page (so a Copy link, an export or a
// panel opened next is for the step on screen), and after each step while the page asked for it (`sync`: a
// panel that shows the step's own server-side reading is open). The address bar's `step` follows the screen.
// Plain DOM and canvas: no library, nothing fetched.

const STATES = new WeakMap();
let active = null; // the stepper the page's keys drive (the last one mounted that is still on the page)
let keysBound = false;

const KEYS = { ArrowRight: 'next', ArrowLeft: 'back', Home: 'first', End: 'last', ' ': 'play' };
// This document's last stepper (kept on window, so it lives while the page is switched inside the app and is gone
// on a reload): its run, the step and view on screen, and the step and view the server last pinned. A stepper
// mounted afresh on the same run (another page, then back) shows the kept step and view where the server has
// pinned nothing new since, and tells the server: the step reported with the click that leaves the page can reach
// the server after the other page's run has begun, and is then lost.
const KEPT = '__lensStepperKept';
function keptOnPage() {
  return window[KEPT] || null;
}
function keepOnPage(s) {
  window[KEPT] = { run: s.runId, step: s.step, view: s.viewNow(), pinStep: s.pinStep, pinView: s.pinView };
}
const TIPS = {
  first: 'First step (Home)', back: 'Back one step (←)', next: 'Next step (→)', last: 'Last step (End)',
  play: 'Play / pause (space)',
};
// Icons as SVG paths (24 x 24): a font may lack the media symbols, and an icon font would be one more download.
const ICONS = {
  first: 'M6 6h2v12H6zm3.5 6 8.5 6V6z', back: 'M15.41 7.41 14 6l-6 6 6 6 1.41-1.41L10.83 12z',
  next: 'M10 6 8.59 7.41 13.17 12l-4.58 4.59L10 18l6-6z', last: 'M6 18l8.5-6L6 6v12zM16 6v12h2V6h-2z',
  play: 'M8 5v14l11-7z', pause: 'M6 19h4V5H6v14zm8-14v14h4V5h-4z',
};
function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[name]);
  svg.appendChild(path);
  return svg;
}
const KIND_TITLES = {
  cross_attention: 'Cross-attention', decoder_self_attention: 'Decoder self-attention',
  encoder_self_attention: 'Encoder self-attention',
};
// The view toolbar's buttons, and the URL's names of the kinds (docs/app.md: kind=cross|dec|enc)
const VIEW_KINDS = [
  ['cross_attention', 'Cross', 'Cross: decoder rows over source tokens'],
  ['decoder_self_attention', 'Decoder', 'Decoder self: over the target prefix (masked future hatched)'],
  ['encoder_self_attention', 'Encoder', 'Encoder self: source over source'],
];
const VIEW_NAMES = [
  ['grid', 'Grid', 'Grid: every layer × head'], ['layer', 'Layer', "Layer: one layer's heads side by side"],
  ['head', 'Head', 'One head: a single map, large'],
  ['mean', 'Mean', 'Mean: over heads, a panel per layer'],
];
const KIND_CODES = { cross_attention: 'cross', decoder_self_attention: 'dec', encoder_self_attention: 'enc' };
const VIEW_FIELDS = ['kind', 'view', 'layer', 'head'];

function typing(t) {
  if (!t || !t.getAttribute) return false;
  if (t.isContentEditable || ['TEXTAREA', 'SELECT'].includes(t.tagName)) return true;
  if (t.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'range'].includes(t.type)) return true;
  return ['combobox', 'listbox', 'option', 'textbox'].includes(t.getAttribute('role'))
    || (t.getAttribute('role') === 'slider' && !t.closest('.lens-stepper'));
}

function bindKeys() {
  if (keysBound) return;
  keysBound = true;
  // Capture phase: a toggle or button group that keeps the focus after a click does not swallow the keys.
  document.addEventListener('keydown', (e) => {
    const s = active;
    if (!s || !s.root.isConnected) return;
    const name = KEYS[e.key];
    if (!name || e.altKey || e.ctrlKey || e.metaKey) return;
    const path = e.composedPath ? e.composedPath() : [e.target];
    if (path.some(typing)) return;
    e.preventDefault();
    e.stopPropagation();
    s.act(name);
  }, true);
  // The step goes to the server just before any other click: what that click shows is for the step on screen.
  document.addEventListener('pointerdown', (e) => {
    const s = active;
    if (!s || !s.root.isConnected) return;
    const path = e.composedPath ? e.composedPath() : [e.target];
    if (path.includes(s.root)) return;
    s.flushUrl(); // the address bar holds the step on screen before the click (Copy link shows it)
    s.report();
  }, true);
  // ... and before typing somewhere else (a box reached with Tab, then Enter, is a server run with no click)
  document.addEventListener('focusin', (e) => {
    const s = active;
    if (!s || !s.root.isConnected || s.root.contains(e.target)) return;
    s.report();
  }, true);
}

// ---- the packed run ------------------------------------------------------------------------------------------
const HALF = (() => { // every IEEE half float's value
  const t = new Float32Array(65536);
  for (let i = 0; i < 65536; i++) {
    const s = i & 0x8000 ? -1 : 1, e = (i >> 10) & 0x1f, f = i & 0x3ff;
    t[i] = e === 0 ? s * f * 2 ** -24 : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15);
  }
  return t;
})();

function unpack(bytes) {
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const view = new DataView(buf);
  const magic = String.fromCharCode(...new Uint8Array(buf, 0, 4));
  if (magic !== 'LENS') throw new Error('not a stepper run');
  const size = view.getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, size)));
  const base = 8 + size;
  const kinds = {};
  for (const [kind, a] of Object.entries(header.arrays)) {
    const { layers: L, heads: H, lengths } = a;
    const starts = [0];
    for (const k of lengths) starts.push(starts[starts.length - 1] + k);
    const cells = starts[starts.length - 1];
    const values = new Float32Array(L * H * cells);
    const at = base + a.offset;
    if (header.encoding === 'f16') {
      const half = new Uint16Array(buf, at, L * H * cells);
      for (let i = 0; i < values.length; i++) values[i] = HALF[half[i]];
    } else {
      const q = lengths.length;
      const scales = new Float32Array(buf, at, L * H * q);
      const codes = new Uint8Array(buf, at + 4 * L * H * q, L * H * cells);
      for (let p = 0; p < L * H; p++) {
        for (let r = 0; r < q; r++) {
          const sc = scales[p * q + r] / 255;
          for (let i = p * cells + starts[r]; i < p * cells + starts[r + 1]; i++) values[i] = codes[i] * sc;
        }
      }
    }
    kinds[kind] = { L, H, lengths, starts, cells, values };
  }
  // an audio run: its spectrogram and samples, after the weights (stepper/audio.js)
  return { header, kinds, audio: header.audio ? readAudio(buf, base, header.audio) : null };
}

// ---- colours -------------------------------------------------------------------------------------------------
function lut(stops) {
  const rgb = stops.map(([, c]) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
  const out = [];
  for (let i = 0; i < 256; i++) {
    const f = i / 255;
    let j = 0;
    while (j < stops.length - 2 && f > stops[j + 1][0]) j++;
    const [a, b] = [stops[j][0], stops[j + 1][0]];
    const u = b > a ? Math.min(1, Math.max(0, (f - a) / (b - a))) : 0;
    const c = rgb[j].map((x, k) => Math.round(x + (rgb[j + 1][k] - x) * u));
    out.push(`rgb(${c[0]},${c[1]},${c[2]})`);
  }
  return out;
}

// ---- text helpers --------------------------------------------------------------------------------------------
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
// a probability the model computed as NaN or infinite arrives as null (app/render/stepper: finite)
const pct = (p) => (typeof p !== 'number' ? 'NaN' : p > 0 && p < 0.0005 ? '<0.1%' : `${(100 * p).toFixed(1)}%`);
const fixed = (p, digits) => (typeof p === 'number' ? p.toFixed(digits) : 'NaN');
const asText = (pieces, special) => pieces.filter((p) => !special.has(p)).join('').replaceAll('▁', ' ').trim();

// ---- one stepper ---------------------------------------------------------------------------------------------
function create(parent) {
  const root = el('div', 'lens-stepper');
  root.setAttribute('data-testid', 'lens-stepper');
  parent.appendChild(root);
  const s = {
    root, run: null, header: null, seq: null, runId: null, step: 1, reported: null, playing: false, timer: null,
    urlTimer: null, syncTimer: null, layoutKey: null, panels: [], colours: null, setState: null, lastDraw: 0,
  };

  // What to show: the kind, the view, the layer and the head. Switched here, drawn from the packed run (it holds
  // every kind, layer and head) with nothing sent; the server hears the view with the step (s.report).
  const views = el('div', 'lens-viewbar');
  views.setAttribute('role', 'toolbar');
  views.setAttribute('aria-label', 'What the picture shows');
  const pickers = { kind: {}, view: {} };
  for (const [group, names, label] of [['kind', VIEW_KINDS, 'Attention'], ['view', VIEW_NAMES, 'Heads']]) {
    const box = el('div', `lens-seg lens-${group}s`);
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', label);
    for (const [value, text, tip] of names) {
      const b = el('button', 'lens-segb', text);
      b.type = 'button';
      b.dataset.value = value;
      b.title = tip;
      b.addEventListener('click', () => s.setView({ [group]: value }));
      pickers[group][value] = b;
      box.appendChild(b);
    }
    views.appendChild(box);
  }
  for (const name of ['layer', 'head']) {
    const sel = el('select', `lens-pick lens-pick-${name}`);
    sel.setAttribute('aria-label', name === 'layer' ? 'Layer' : 'Head');
    sel.addEventListener('change', () => s.setView({ [name]: Number(sel.value) }));
    pickers[name] = sel;
    views.appendChild(sel);
  }
  root.appendChild(views);

  // the step bar
  const bar = el('div', 'lens-bar');
  bar.setAttribute('role', 'toolbar');
  bar.setAttribute('aria-label', 'Step through the decoding');
  const buttons = {};
  for (const name of ['first', 'back', 'next', 'last', 'play']) {
    const b = el('button', `lens-btn lens-${name}`);
    b.appendChild(icon(name));
    b.type = 'button';
    b.title = TIPS[name];
    b.setAttribute('aria-label', TIPS[name]);
    b.addEventListener('click', () => s.act(name));
    buttons[name] = b;
    bar.appendChild(b);
  }
  const speed = el('select', 'lens-speed');
  speed.title = 'Seconds per step while playing';
  speed.setAttribute('aria-label', 'Seconds per step while playing');
  for (const v of [0.5, 1, 2, 3]) {
    const o = el('option', '', `${v} s`);
    o.value = String(v);
    speed.appendChild(o);
  }
  speed.value = '1';
  speed.addEventListener('change', () => { if (s.playing) { s.stop(); s.play(); } });
  bar.appendChild(speed);
  const slider = el('input', 'lens-slider');
  slider.type = 'range';
  slider.min = '1';
  slider.setAttribute('aria-label', 'Step');
  slider.addEventListener('input', () => { s.stop(); s.go(Number(slider.value)); });
  bar.appendChild(slider);
  const counter = el('span', 'lens-counter');
  counter.setAttribute('aria-live', 'polite');
  bar.appendChild(counter);
  // The head chooser: every layer x head of the kind shown, as a small matrix; one click opens it, one click on a
  // cell shows that head alone, on a layer's name that layer's heads side by side (192 heads per kind stay two
  // clicks away). Drawn here at once (setView).
  const choose = el('button', 'lens-choose');
  choose.type = 'button';
  choose.setAttribute('aria-haspopup', 'dialog');
  choose.setAttribute('aria-expanded', 'false');
  choose.addEventListener('click', () => s.toggleChooser());
  bar.appendChild(choose);
  root.appendChild(bar);
  const chooser = el('div', 'lens-chooser');
  chooser.setAttribute('role', 'dialog');
  chooser.setAttribute('aria-label', 'Choose a layer or a head');
  chooser.hidden = true;
  chooser.addEventListener('keydown', (e) => { if (e.key === 'Escape') { s.closeChooser(); choose.focus(); } });
  root.appendChild(chooser);


  const body = el('div', 'lens-body');
  const left = el('div', 'lens-left');
  const picture = el('div', 'lens-picture');
  picture.setAttribute('role', 'img');
  const described = el('p', 'lens-sr');
  described.id = `lens-desc-${Math.random().toString(36).slice(2)}`;
  picture.setAttribute('aria-describedby', described.id);
  const caption = el('p', 'lens-caption');
  const legend = el('div', 'lens-legend');
  legend.setAttribute('aria-hidden', 'true');
  const legendBar = el('span', 'lens-legend-bar');
  const legendMax = el('span', 'lens-legend-max', '1');
  legend.append(el('span', 'lens-label', 'weight'), el('span', '', '0'), legendBar, legendMax,
    el('span', 'lens-legend-mask', ''), el('span', 'lens-label', 'masked'));
  // A picture in a scrolling box (one head, layer, mean) can hold more than the box shows, and a scroll bar may
  // not be drawn (overlay scroll bars, headless): what is cut off below is named on a button over the box's
  // bottom edge, which scrolls the box to it. Outside the box (not part of the picture a screen reader reads),
  // in a box of no height (shown or hidden by its visibility: nothing is laid out again).
  const more = el('div', 'lens-more');
  const moreButton = el('button', 'lens-more-btn');
  moreButton.type = 'button';
  moreButton.addEventListener('click', () => s.showBelow());
  more.appendChild(moreButton);
  left.append(legend, picture, more, described, caption);
  const side = el('div', 'lens-side');
  body.append(left, side);
  root.appendChild(body);
  const tip = el('div', 'lens-tip');
  tip.setAttribute('role', 'tooltip');
  root.appendChild(tip);
  Object.assign(s, { buttons, speed, slider, counter, picture, described, caption, side, tip, left, legendBar,
    legendMax, choose, chooser, pickers, more, moreButton });
  picture.addEventListener('scroll', () => { if (s.frame) updateMore(s, picture.scrollTop); }, { passive: true });
  s.showBelow = () => { // the box scrolled so the last drawn row and its key labels end at its bottom
    if (!s.frame) return;
    picture.scrollTo({ top: Math.max(0, Math.ceil(s.drawnBottom - boxHeight(s))) });
  };

  s.toggleChooser = () => { if (chooser.hidden) s.openChooser(); else s.closeChooser(); };
  s.openChooser = () => {
    if (!s.run) return;
    buildChooser(s);
    chooser.hidden = false;
    choose.setAttribute('aria-expanded', 'true');
    const now = chooser.querySelector('.lens-hc.now') || chooser.querySelector('.lens-hc');
    if (now) now.focus();
  };
  s.closeChooser = () => {
    chooser.hidden = true;
    choose.setAttribute('aria-expanded', 'false');
  };
  document.addEventListener('pointerdown', (e) => {
    if (chooser.hidden) return;
    const path = e.composedPath ? e.composedPath() : [e.target];
    if (!path.includes(chooser) && !path.includes(choose)) s.closeChooser();
  }, true);
  // A view, layer and head chosen in the stepper (the chooser, a panel's title): drawn now through setView (the
  // server hears it with the step, as any view switch made here).
  s.pick = (view, layer, head) => {
    s.closeChooser();
    s.picture.scrollTop = 0; // a new picture starts at its top, not where the last one was scrolled to
    s.setView({ view, ...(layer === undefined ? {} : { layer }), ...(head === undefined ? {} : { head }) });
  };

  s.act = (name) => {
    if (!s.run) return;
    const m = s.header.m;
    if (name === 'play') { if (s.playing) s.stop(); else s.play(); return; }
    s.stop();
    s.go({ first: 1, back: s.step - 1, next: s.step + 1, last: m }[name]);
  };
  s.play = () => {
    if (!s.run || s.header.m <= 1) return;
    if (s.step >= s.header.m) s.go(1);
    s.playing = true;
    s.timer = setInterval(() => {
      if (!root.isConnected || s.step >= s.header.m) { s.stop(); return; }
      s.go(s.step + 1);
    }, Number(speed.value) * 1000);
    s.drawBar();
  };
  s.stop = () => {
    if (s.timer) clearInterval(s.timer);
    s.timer = null;
    if (s.playing) { s.playing = false; s.drawBar(); }
  };
  s.go = (step) => {
    const m = s.header.m;
    const next = Math.max(1, Math.min(m, Math.round(step)));
    if (next === s.step && s.lastDraw) return;
    s.step = next;
    s.stepped = true;
    s.draw();
    s.keepUrl();
    keepOnPage(s);
    s.syncSoon();
  };
  s.report = () => { // the view first (its callback sets the page's view), then the step
    if (!s.setState) return;
    const view = JSON.stringify(s.viewNow());
    if (s.reportedView !== view) {
      s.reportedView = view;
      s.setState('view', JSON.parse(view));
    }
    if (s.reported === s.step) return;
    s.reported = s.step;
    s.setState('step', s.step);
  };
  s.syncSoon = () => { // a panel that shows the step's server-side reading is open: it hears each change
    if (!s.header.sync) return;
    clearTimeout(s.syncTimer);
    s.syncTimer = setTimeout(() => s.report(), 300);
  };
  s.viewNow = () => Object.fromEntries(VIEW_FIELDS.map((f) => [f, s.header[f]]));
  // Kind, view, layer or head switched in the stepper: drawn now from the packed run, kept in the address bar,
  // nothing sent (the server hears it with the step).
  s.setView = (patch) => {
    if (!s.run) return;
    const h = s.header;
    for (const f of VIEW_FIELDS) {
      if (patch[f] === undefined) continue;
      if (f === 'kind' && !s.run.kinds[patch.kind]) continue;
      h[f] = f === 'layer' || f === 'head' ? Math.max(0, Math.round(Number(patch[f])) || 0) : patch[f];
    }
    const k = s.run.kinds[h.kind];
    h.layer = Math.min(h.layer, k.L - 1);
    h.head = Math.min(h.head, k.H - 1);
    s.view = s.viewNow();
    s.layoutKey = null;
    s.draw();
    s.keepUrl();
    keepOnPage(s);
    s.syncSoon();
  };
  s.flushUrl = () => { // a pending address-bar write, now
    if (!s.urlTimer) return;
    clearTimeout(s.urlTimer);
    s.urlWrite();
  };
  s.keepUrl = () => { // the address bar's step and view, at most four times a second (browsers throttle them)
    if (s.urlTimer) return;
    s.urlTimer = setTimeout(s.urlWrite = () => {
      s.urlTimer = null;
      if (!root.isConnected) return;
      const u = new URL(window.location.href);
      if (!u.searchParams.has('step') && !s.header.url_step) return;
      const h = s.header;
      u.searchParams.set('step', String(s.step));
      if (u.searchParams.has('kind') || h.url_step) u.searchParams.set('kind', KIND_CODES[h.kind] || h.kind);
      if (u.searchParams.has('view') || h.url_step) u.searchParams.set('view', h.view);
      if (u.searchParams.has('layer') || h.url_step) u.searchParams.set('layer', String(h.layer + 1));
      if (u.searchParams.has('head') || h.url_step) u.searchParams.set('head', String(h.head + 1));
      window.history.replaceState(window.history.state, '', u.toString());
      window.dispatchEvent(new Event('lens-url')); // Copy link's box follows (app/render/share)
    }, 250);
  };
  s.cleanup = () => { s.stop(); if (active === s) active = null; };

  picture.addEventListener('mousemove', (e) => s.hover(e));
  picture.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  new ResizeObserver(() => { if (s.run) { s.layoutKey = null; s.draw(); } }).observe(left);
  window.addEventListener('resize', () => { if (s.run && root.isConnected) { s.layoutKey = null; s.draw(); } });
  return s;
}

// ---- what each view shows ------------------------------------------------------------------------------------
function panelsOf(s) {
  const h = s.header, k = s.run.kinds[h.kind];
  if (h.view === 'head') {
    const layer = Math.min(h.layer, k.L - 1), head = Math.min(h.head, k.H - 1);
    return [{ title: '', layer, heads: [head] }];
  }
  if (h.view === 'layer_mean') { // one layer's mean over its heads, one panel (Compare, the Leakage lab)
    return [{ title: '', layer: Math.min(h.layer, k.L - 1), heads: [...Array(k.H).keys()] }];
  }
  if (h.view === 'layer') { // one layer's heads side by side: the grid of a big model, a layer at a time
    const layer = Math.min(h.layer, k.L - 1);
    return [...Array(k.H).keys()].map((hd) => ({ title: `layer ${layer + 1} · head ${hd + 1}`, layer, heads: [hd] }));
  }
  if (h.view === 'mean') {
    const all = [...Array(k.H).keys()];
    return [...Array(k.L).keys()].map((l) => ({ title: `layer ${l + 1}${k.H > 1 ? ' (mean of heads)' : ''}`, layer: l, heads: all }));
  }
  const out = [];
  for (let l = 0; l < k.L; l++) for (let hd = 0; hd < k.H; hd++) out.push({ title: `layer ${l + 1} · head ${hd + 1}`, layer: l, heads: [hd] });
  return out;
}

function labelsOf(s) {
  const h = s.header, kind = h.kind;
  const src = s.run.audio ? audioLabels(s) : h.source.map((t, i) => `${i} ${t}`);
  if (kind === 'encoder_self_attention') return { q: src, k: src };
  const q = h.read.map((r, i) => `${i} ${r} → ${h.target[i]}`);
  if (kind === 'cross_attention') return { q, k: src };
  return { q, k: h.read.map((t, i) => `${i} ${t}`) };
}

// value of (panel, row, key): null where nothing was computed (past a row's keys: hatched)
function valueAt(s, panel, q, key) {
  const k = s.run.kinds[s.header.kind];
  if (key >= k.lengths[q]) return null;
  let sum = 0;
  for (const hd of panel.heads) sum += k.values[(panel.layer * k.H + hd) * k.cells + k.starts[q] + key];
  return sum / panel.heads.length;
}

function fontPx(s) {
  const big = window.innerWidth >= 1700;
  return s.header.present ? (big ? 22 : 18) : (big ? 14 : 12);
}

function measure(labels, px) {
  const c = measure.ctx || (measure.ctx = document.createElement('canvas').getContext('2d'));
  c.font = `${px}px 'DejaVu Sans Mono', Menlo, monospace`;
  return Math.max(0, ...labels.map((t) => c.measureText(t).width));
}

// ---- layout: built once per run, view and width ----------------------------------------------------------------
// A step changes only what it changes: the picture's boxes keep their size from the first step to the last (each
// panel is laid out as tall as its tallest step), the labels of the keys are laid out once and follow the rows
// drawn so far by a transform of their row (never laid out or painted again while stepping), and the current
// row's outline is one element moved by a transform.
function layout(s) {
  const h = s.header;
  const width = s.width;
  const key = [s.runId, h.kind, h.view, h.layer, h.head, width, fontPx(s), window.innerWidth >= 1700].join('|');
  if (key === s.layoutKey) return;
  s.layoutKey = key;
  const F = fontPx(s);
  const { q, k } = labelsOf(s);
  const panels = panelsOf(s);
  const gap = 14;
  const labelW = Math.min(0.32 * width, measure(q, F) + 10);
  const avail = width - labelW - gap - 2; // the label column, then a gap before each panel
  const natural = h.view === 'grid' ? s.run.kinds[h.kind].H : panels.length;
  const audio = s.run.audio && h.kind !== 'decoder_self_attention'; // keys are a clip's frames (audio.js)
  const minCell = audio ? 0.5 : F + 3; // a cell wide enough for its key's label, turned upright
  const perRow = Math.max(1, Math.min(natural, Math.floor((avail + gap) / (k.length * minCell + gap))));
  s.perRow = perRow;
  // cells grow to fill the column (a short sentence is a picture the class can read from the back, not a strip
  // in its left quarter); their height stays capped, so a long run still fits above the fold
  const cellW = Math.max(audio ? 0.5 : 2, (avail - gap * (perRow - 1)) / perRow / k.length);
  const keyW = measure(k, F);
  const upright = !audio && keyW + 6 > cellW; // a clip's keys: times under the spectrogram, thinned to ticks
  const strip = audio ? audioStripH(s, h.view) : 0;
  // a view that scrolls inside the picture (all but the grid) keeps its rows, their key labels underneath and
  // its title inside the picture's box (min(62vh, 640px), stepper.css) where they can: at 1366 x 768 eleven
  // 40-px rows pushed the labels of the keys out of it and below the fold
  const keysH = (upright ? Math.min(140, keyW + 8) : F + 8) + strip;
  const rowsRoom = h.view === 'grid' ? Infinity : pictureRoom(s) - keysH - (panels[0].title ? F + 8 : 0) - 12;
  s.panelCap = rowsRoom; // the tallest a panel's rows may be (minPanelH)
  const fitH = h.view === 'grid' ? 40 : rowsRoom / q.length;
  const framesRows = audio && h.kind === 'encoder_self_attention'; // a row per frame: as thin as the columns
  const cellH = Math.max(framesRows ? 1 : F + 5, Math.min(40, cellW, framesRows ? fitH : Math.floor(fitH)));
  const tallest = Math.max(cellH * q.length, minPanelH(k.length * cellW, s.panelCap));
  const every = upright ? Math.max(1, Math.ceil((F + 2) / cellW)) : 1;
  s.geometry = { q, k, cellW, cellH, rowH: cellH, F };
  // the rows' box at its tallest over the run's steps: every panel keeps that height, so a step moves nothing
  let rowsBox = 0;
  for (let step = 1; step <= h.m; step++) {
    const rows = rowsAt(s, step), keys = keysAt(s, step);
    rowsBox = Math.max(rowsBox, rows * rowHeight(s, rows, keys));
  }
  const labelWidth = upright ? Math.max(cellW, F + 2) : cellW;
  const overhang = (cellW - labelWidth) / 2; // an upright label wider than its cell is centred on it
  s.picture.replaceChildren();
  s.picture.style.setProperty('--lens-font', `${F}px`);
  s.picture.classList.toggle('lens-scroll', h.view !== 'grid');
  s.panels = [];
  s.labelRows = [];
  s.rowsBox = rowsBox;
  for (let r = 0; r < panels.length; r += perRow) {
    const row = el('div', 'lens-prow');
    const names = el('div', 'lens-qlabels');
    names.style.width = `${labelW}px`;
    names.style.fontSize = `${F}px`;
    const titleH = panels[r].title ? F + 8 : 0;
    names.style.paddingTop = `${titleH}px`;
    names.style.height = `${rowsBox}px`; // under its padding: the panels' title
    const qEls = q.map((t) => {
      const d = el('div', 'lens-q hidden', t);
      d.title = t;
      names.appendChild(d);
      return d;
    });
    row.appendChild(names);
    if (framesRows) audioRows(s, names, qEls, cellH); // a frame a row: its times as ticks (audio.js)
    s.labelRows.push({ box: names, row, qEls, rows: 0, rowH: 0, now: null, up: 0 });
    for (const p of panels.slice(r, r + perRow)) {
      const box = el('div', 'lens-panel');
      box.style.width = `${cellW * k.length}px`;
      box.style.height = `${titleH + rowsBox + keysH}px`;
      box.dataset.layer = String(p.layer + 1);
      box.dataset.heads = p.heads.map((x) => x + 1).join(',');
      if (p.title) {
        // a title opens what it names: a layer's mean -> that layer's heads; a head -> that head alone
        const t = el('button', 'lens-ptitle lens-open', p.title);
        t.type = 'button';
        const one = p.heads.length === 1;
        t.title = one ? `Show ${p.title} alone` : `Show the ${p.heads.length} heads of layer ${p.layer + 1}`;
        t.addEventListener('click', () => (one ? s.pick('head', p.layer, p.heads[0]) : s.pick('layer', p.layer)));
        t.style.fontSize = `${F}px`;
        t.style.height = `${titleH}px`;
        box.appendChild(t);
      }
      const wrap = el('div', 'lens-cells');
      const canvas = el('canvas');
      const dpr = window.devicePixelRatio || 1;
      canvas.width = Math.round(cellW * k.length * dpr);
      canvas.height = Math.round(tallest * dpr);
      canvas.style.width = `${cellW * k.length}px`;
      canvas.style.height = `${tallest}px`;
      canvas.setAttribute('aria-hidden', 'true');
      const outline = el('div', 'lens-outline');
      outline.style.width = `${cellW * k.length}px`;
      wrap.append(canvas, outline);
      // the labels of the keys, in one row of normal flow (no box of its own per label), under the rows drawn
      const keys = el('div', 'lens-klabels');
      keys.style.width = `${cellW * k.length}px`;
      keys.style.fontSize = `${F}px`;
      keys.style.top = `${titleH}px`;
      keys.style.height = `${keysH}px`;
      const kEls = k.map((t, i) => {
        const d = el('span', `lens-k${upright ? ' up' : ''}`, t);
        d.style.width = `${labelWidth}px`;
        if (overhang) d.style.margin = `0 ${overhang}px`;
        d.title = t;
        if (i % every) d.classList.add('thin');
        keys.appendChild(d);
        return d;
      });
      if (audio) audioKeys(s, keys, kEls, cellW, strip);
      box.append(wrap, keys);
      row.appendChild(box);
      s.panels.push({ ...p, canvas, ctx: canvas.getContext('2d'), outline, kEls, qEls, box, wrap, keys, cellW, cellH,
        dpr, prow: r / perRow, shown: { rows: -1, rowH: 0, keys: k.length, now: undefined, row: '' } });
    }
    s.picture.appendChild(row);
  }
  // The picture's frame, for what a step draws in it (placeRoom, updateMore): each row of panels is as tall as at
  // its tallest step, with a 10 px margin under it (.lens-prow). The space the steps to come will fill is shown as
  // such (the room): one box under the whole picture, laid out here, of which a step shows the part under the
  // rows drawn so far by a clip.
  const titleH = panels[0].title ? F + 8 : 0;
  const rowsN = Math.ceil(panels.length / perRow);
  const prowH = titleH + rowsBox + keysH;
  const scroll = h.view !== 'grid';
  // the picture's content: the last row's margin is in a scrolling box, and out of a plain one (collapsed)
  s.frame = { titleH, keysH, prowH, rowsN, contentH: rowsN * (prowH + 10) - (scroll ? 0 : 10), scroll };
  const room = el('div', 'lens-room');
  room.setAttribute('aria-hidden', 'true');
  room.style.left = `${labelW + gap}px`;
  room.style.width = `${Math.min(perRow, panels.length) * (cellW * k.length + gap) - gap}px`;
  const roomText = el('span', 'lens-room-text', 'the rows of the steps to come are drawn here');
  room.appendChild(roomText);
  s.picture.prepend(room);
  s.room = room;
  s.roomText = roomText;
  s.roomFor = null;
  setRoomHeight(s);
}

// The height the picture's box may take: min(62vh, 640px) (stepper.css), and in presenter mode no more than what is
// left under the picture's top at the page's top, so that nothing of it (the source words under the rows) is
// below the projected screen's bottom edge: at 1366 x 768 the controls above it took 405 px of the 768.
function pictureRoom(s) {
  const ih = window.innerHeight || 768;
  const box = Math.min(0.62 * ih, 640);
  if (!s.header.present || !s.picture || !s.picture.isConnected) return box;
  let top = s.picture.getBoundingClientRect().top;
  for (let e = s.picture.parentElement; e; e = e.parentElement) top += e.scrollTop || 0;
  const left = ih - top - 16;
  return left >= 200 ? Math.min(box, left) : box;
}

// ---- the room kept for the steps to come, and what a scrolling box holds below what it shows -------------------
function roomHeight(s) { // down to the last row of panels' bottom, or to the height the picture was levelled to
  return Math.max(s.frame.contentH, s.minH || 0) - (s.frame.scroll ? 10 : 0);
}
function setRoomHeight(s) {
  const px = `${roomHeight(s)}px`;
  if (s.room.style.height !== px) s.room.style.height = px;
}
// The height of the picture's box: its content, or at least the height it was levelled to (two runs side by side),
// at most the scrolling box's (stepper.css: .lens-picture.lens-scroll, min(62vh, 640px)).
function boxHeight(s) {
  const content = Math.max(s.frame.contentH, s.minH || 0);
  return s.frame.scroll ? Math.min(content, 0.62 * (window.innerHeight || 768), 640) : content;
}

// The room shown under the rows drawn so far (`rows` rows `rowH` px tall): its part under the last row of panels'
// key labels, by a clip, its words at the top of that part by a transform (nothing laid out again); the words only
// where there is space for them.
function placeRoom(s, rows, rowH) {
  const f = s.frame, last = s.labelRows[s.labelRows.length - 1];
  s.drawnBottom = (f.rowsN - 1) * (f.prowH + 10) - (last ? last.up : 0) + f.titleH + rows * rowH + f.keysH;
  const top = Math.ceil(s.drawnBottom) + 4, free = roomHeight(s) - top;
  const look = free < 8 ? 'none' : `${top}|${free >= 2 * s.geometry.F + 12}`;
  if (s.roomFor === look) return;
  s.roomFor = look;
  s.room.classList.toggle('on', free >= 8);
  s.room.classList.toggle('worded', free >= 2 * s.geometry.F + 12);
  if (free >= 8) {
    s.room.style.clipPath = `inset(${top}px 0 0 0)`;
    s.roomText.style.transform = `translateY(${top + 6}px)`;
  }
}

// The button over a scrolling picture's bottom edge, shown while a drawn row or key label is below what the box
// shows (scrolled `top` px down): it names the panels cut off (or the rows, or the labels of the keys).
function updateMore(s, top) {
  const f = s.frame, end = top + boxHeight(s) + 1;
  let text = '';
  if (f.scroll && s.drawnBottom > end) {
    const rows = s.shownRows, rowH = s.geometry.rowH, names = [];
    let rowsCut = false;
    s.labelRows.forEach((L, i) => {
      const cells = i * (f.prowH + 10) - L.up + f.titleH; // the top of this row of panels' cells
      if (cells + rows * rowH + f.keysH <= end) return;
      if (cells + rows * rowH > end) rowsCut = true;
      for (const p of s.panels) if (p.prow === i && p.title) names.push(p.title);
    });
    text = names.length ? `More below: ${names.join(', ')} ↓` : rowsCut ? 'More rows below ↓' : 'The key labels below ↓';
  }
  if (s.moreText === text) return;
  s.moreText = text;
  s.more.classList.toggle('on', !!text);
  if (text) {
    s.moreButton.textContent = text;
    s.moreButton.title = 'Scroll the picture to show it';
  }
}

// The least height of a panel drawn `width` px wide: 0.4 of its width, so a map of one or two rows still reads
// as a picture, not a flat strip; at most 0.45 of the window's height, so it stays above the fold.
function minPanelH(width, cap = Infinity) {
  return Math.min(0.4 * width, 0.45 * (window.innerHeight || 768), cap);
}

// The height of a row when `rows` rows of `keys` keys are shown: the layout's cell height, taller while there
// are too few rows for the panel to be 0.4 as tall as it is wide.
function rowHeight(s, rows, keys) {
  const { cellW, cellH } = s.geometry;
  return Math.max(cellH, Math.ceil(minPanelH(keys * cellW, s.panelCap) / Math.max(1, rows))); // whole px
}

// ---- drawing a step ------------------------------------------------------------------------------------------
function rowsAt(s, step) {
  const h = s.header;
  return h.kind === 'encoder_self_attention' ? h.n : step;
}
function keysAt(s, step) {
  const h = s.header;
  if (h.kind !== 'decoder_self_attention') return h.n;
  return h.teacher ? h.m : step;
}
const shownRows = (s) => rowsAt(s, s.step);
const shownKeys = (s) => keysAt(s, s.step);

function zmaxOf(s) {
  if (s.header.scale !== 'stretch') return 1;
  let z = 1e-6;
  const rows = shownRows(s), keys = shownKeys(s);
  for (const p of s.panels) {
    for (let qi = 0; qi < rows; qi++) for (let ki = 0; ki < keys; ki++) {
      const v = valueAt(s, p, qi, ki);
      if (v !== null && v > z) z = v;
    }
  }
  return z;
}

// `cls` on the elements from..to-1 of `els` set to `on` (only those: a step touches the labels it changes)
function classRange(els, from, to, cls, on) {
  for (let i = Math.max(0, from); i < Math.min(els.length, to); i++) els[i].classList.toggle(cls, on);
}

// Every cell of a panel, rows `cellH` px tall, on its canvas (the rows past its height left out): a weight's colour
// on the scale 0..z, or hatched where nothing was computed (a key the row may not see); the gold links over them.
function paintCells(s, p, cellH, z) {
  const h = s.header, { cellW } = s.geometry, k = s.run.kinds[h.kind];
  const c = p.ctx;
  const rows = Math.min(k.lengths.length, Math.ceil(p.canvas.height / p.dpr / cellH));
  const keys = p.kEls.length;
  const seamless = !!s.run.audio && h.kind !== 'decoder_self_attention';
  c.setTransform(p.dpr, 0, 0, p.dpr, 0, 0);
  c.clearRect(0, 0, p.canvas.width, p.canvas.height);
  for (let qi = 0; qi < rows; qi++) {
    for (let ki = 0; ki < keys; ki++) {
      const v = valueAt(s, p, qi, ki);
      const x = ki * cellW, y = qi * cellH;
      if (v === null) {
        c.fillStyle = h.mask_colour;
        c.fillRect(x + 0.5, y + 0.5, cellW - 1, cellH - 1);
        if (cellW >= 6) {
          c.strokeStyle = '#8a8a8a';
          c.lineWidth = 1;
          c.beginPath();
          c.moveTo(x + 2, y + cellH - 2);
          c.lineTo(x + cellW - 2, y + 2);
          c.stroke();
        }
      } else {
        c.fillStyle = s.colours[Math.max(0, Math.min(255, Math.round((v / z) * 255)))];
        if (seamless) c.fillRect(x, y, cellW + 0.5, cellH + 0.5); // a clip's frames: one picture, no seams
        else c.fillRect(x + 0.5, y + 0.5, Math.max(0.5, cellW - 1), Math.max(0.5, cellH - 1));
      }
    }
  }
  if (goldOn(s)) drawGold(s, p, rows, keys, cellW, cellH); // gold links from the Alignment page
}

function drawPicture(s) {
  layout(s);
  const h = s.header, { cellW } = s.geometry;
  const rows = shownRows(s), keys = shownKeys(s);
  const cellH = rowHeight(s, rows, keys);
  s.geometry.rowH = cellH;
  const z = zmaxOf(s);
  s.zmax = z;
  const now = h.kind === 'encoder_self_attention' ? null : s.step - 1;
  const gold = goldOn(s);
  for (const p of s.panels) {
    // The canvas holds every row and key of the run, drawn once for this row height and colour scale; a step
    // shows the rows drawn so far by the height of its box (and, where the keys grow, the keys by a clip), so the
    // canvas itself is drawn again only when the rows' height, the colour scale or the gold links change.
    const look = `${cellH}|${z}|${gold}`;
    if (p.drawnFor !== look) {
      p.drawnFor = look;
      paintCells(s, p, cellH, z);
    }
    const current = [];
    if (now !== null) {
      for (let ki = 0; ki < keys; ki++) {
        const v = valueAt(s, p, now, ki);
        current.push(v === null ? null : Number(v.toFixed(5)));
      }
    }
    if (gold) { // the gold cells shown (row, column, sure), for tests
      const shown = JSON.stringify(s.header.gold.cells.filter(([r, k]) => r < rows && k < keys));
      if (p.box.dataset.gold !== shown) p.box.dataset.gold = shown;
    } else if (p.box.dataset.gold !== undefined) delete p.box.dataset.gold;
    const hiddenKeys = p.kEls.length - keys; // decoder self-attention: the keys this step cannot see yet
    const clip = hiddenKeys > 0 ? `inset(0 ${hiddenKeys * cellW}px 0 0)` : '';
    if (p.canvas.style.clipPath !== clip) p.canvas.style.clipPath = clip;
    const was = p.shown;
    const row = JSON.stringify(current);
    if (was.row !== row) p.box.dataset.row = row;
    if (was.rows !== rows || was.rowH !== cellH) {
      // the rows computed so far; the key labels follow them (moved, not laid out again)
      p.wrap.style.height = `${rows * cellH}px`;
      p.keys.style.transform = `translateY(${rows * cellH}px)`;
    }
    if (was.rowH !== cellH) p.outline.style.height = `${cellH}px`;
    if (was.now !== now || was.rowH !== cellH) {
      if ((was.now === null) !== (now === null) || was.now === undefined) p.outline.style.display = now === null ? 'none' : 'block';
      if (now !== null) p.outline.style.transform = `translateY(${now * cellH}px)`;
    }
    if (was.keys !== keys) {
      classRange(p.kEls, Math.min(was.keys, keys), Math.max(was.keys, keys), 'hidden', keys < was.keys);
    }
    p.shown = { rows, rowH: cellH, keys, now, row };
  }
  // Each row of panels is laid out as tall as its tallest step; a row under another is moved up (a transform, so
  // nothing is laid out again) by what the rows above have still to fill, so the panels sit one under the other.
  const slack = s.rowsBox - rows * cellH;
  s.labelRows.forEach((L, i) => {
    const up = Math.max(0, Math.round(i * slack));
    if (L.up !== up) L.row.style.transform = up ? `translateY(-${up}px)` : '';
    L.up = up;
  });
  s.shownRows = rows;
  placeRoom(s, rows, cellH);
  updateMore(s, s.scrollTopNow || 0);
  for (const L of s.labelRows) { // row labels live in the panel row's first column: every panel row shares them
    if (L.rowH !== cellH) { // every row label's height (stepper.css: .lens-q), one property of their column
      L.box.style.setProperty('--lens-row', `${cellH}px`);
      L.rowH = cellH;
    }
    if (L.rows !== rows) {
      classRange(L.qEls, Math.min(L.rows, rows), Math.max(L.rows, rows), 'hidden', rows < L.rows);
      L.rows = rows;
    }
    if (L.now !== now) {
      if (L.now !== null && L.qEls[L.now]) L.qEls[L.now].classList.remove('now');
      if (now !== null && L.qEls[now]) L.qEls[now].classList.add('now');
      L.now = now;
    }
  }
  // After a step taken here, the current row is kept in view in a one-row picture (one head, the mean): the
  // picture's own box and the page scroll as little as it takes.
  // (draw() scrolls once everything is written: a scroll lays the page out, and the frame need not again)
  s.keepInView = now !== null && s.stepped && s.picture.classList.contains('lens-scroll') && s.panels[0]
    ? s.panels[0].outline : null;
  s.stepped = false;
  describe(s, rows, keys, now);
}

function describe(s, rows, keys, now) {
  const h = s.header, { q, k } = s.geometry;
  const what = h.view === 'head' ? `${KIND_TITLES[h.kind]} · layer ${h.layer + 1} · head ${h.head + 1}`
    : h.view === 'layer_mean' ? `${KIND_TITLES[h.kind]} · layer ${h.layer + 1}, mean over heads`
    : h.view === 'layer' ? `${KIND_TITLES[h.kind]} · layer ${h.layer + 1}, every head`
      : `${KIND_TITLES[h.kind]}${h.view === 'mean' ? ', mean over heads' : ''}`;
  const n = s.panels.length;
  let text = `${what}: ${n > 1 ? `${n} panels, each ` : ''}${rows} × ${keys} (queries × keys). `
    + `Last query: ${q[rows - 1]}. Keys: ${k.slice(0, keys).join(', ')}.`;
  if (now !== null && n === 1) {
    let best = -1, bv = -1;
    for (let ki = 0; ki < keys; ki++) {
      const v = valueAt(s, s.panels[0], now, ki);
      if (v !== null && v > bv) { bv = v; best = ki; }
    }
    if (best >= 0) text += ` Row ${now} looks most at ${k[best]} (${bv.toFixed(2)}).`;
  }
  text += goldText(s);
  setAttr(s.picture, 'aria-label', text);
  setText(s.described, text);
}

function chip(text, cls, title) {
  const c = el('span', `lens-chip${cls ? ` ${cls}` : ''}`, text);
  if (title) c.title = title;
  return c;
}

// Text set only where it differs (setting the same text or attribute again is a change the page lays out again).
function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}
function setAttr(e, name, value) {
  if (e.getAttribute(name) !== value) e.setAttribute(name, value);
}

// The side panel: built once for the header (a run, a server run's fields), then changed in place at each step:
// its step number, one chip more or less, the text so far, the row read, the verdict, the share and the bars.
function buildSide(s) {
  const h = s.header;
  const S = { header: h, special: new Set(h.special), forced: new Set(h.forced), chips: [], now: -1 };
  const out = [];
  if (h.picture !== 'next') {
    S.stepno = el('div', 'lens-stepno');
    S.prefix = el('div', 'lens-chips lens-prefix');
    S.prefix.appendChild(el('span', 'lens-label', h.teacher ? 'Reference read so far' : 'Output so far'));
    S.text = document.createTextNode('');
    const txt = el('div', 'lens-astext');
    txt.append(el('span', 'lens-label', 'as text'), S.text);
    S.readLabel = el('span', 'lens-label');
    S.readChip = chip('', 'read');
    S.chose = chip('', 'now');
    const read = el('div', 'lens-chips lens-read');
    read.append(S.readLabel, S.readChip, el('span', 'lens-label', h.teacher ? 'and had to predict' : 'and chose'),
      S.chose);
    out.push(S.stepno, S.prefix, txt, read);
    if (h.teacher) {
      S.verdict = el('div', 'lens-verdict');
      out.push(S.verdict);
    }
    if (h.source_share) { // a contributions reading: source vs prefix
      S.share = el('div', 'lens-share');
      S.share.setAttribute('role', 'img');
      const bar = el('span', 'lens-share-bar');
      S.shareFill = el('span', 'lens-share-source');
      bar.appendChild(S.shareFill);
      S.shareText = el('span', 'lens-share-text');
      S.share.append(el('span', 'lens-label', 'source'), bar, el('span', 'lens-label', 'prefix'), S.shareText);
      S.shareCaption = el('p', 'lens-caption', 'Source vs target prefix: a norm-weighted decomposition of the '
        + 'residual stream through the decoder layers (a simplified ALTI+, Ferrando et al. 2022).');
      out.push(S.share, S.shareCaption);
    }
  }
  if (!h.present || h.picture === 'next') {
    S.topk = el('div', 'lens-topk');
    S.topk.setAttribute('role', 'table');
    S.topkTitle = el('div', 'lens-topk-title');
    S.topk.appendChild(S.topkTitle);
    S.bars = [];
    out.push(S.topk);
    out.push(el('p', 'lens-caption', `Orange: the token ${h.teacher ? 'the model would pick; outlined: the reference.' : 'decoding chose.'}`));
  }
  s.side.replaceChildren(...out);
  s.sideState = S;
  return S;
}

function drawSide(s) {
  const h = s.header, t = s.step - 1, st = h.steps[t];
  const S = s.sideState && s.sideState.header === h ? s.sideState : buildSide(s);
  const { special, forced } = S;
  if (S.stepno) {
    setText(S.stepno, `Step ${s.step} of ${h.m}`);
    while (S.chips.length > s.step) S.chips.pop().remove(); // the output so far: a chip a token
    while (S.chips.length < s.step) {
      const i = S.chips.length, tok = h.target[i];
      const cls = [forced.has(i) ? 'forced' : '', special.has(tok) ? 'special' : ''].filter(Boolean).join(' ');
      const c = chip(tok, cls, `position ${i}${forced.has(i) ? ' · forced' : ''}${special.has(tok) ? ' · special token' : ''}`);
      S.prefix.appendChild(c);
      S.chips.push(c);
    }
    if (S.now !== t) {
      if (S.chips[S.now]) S.chips[S.now].classList.remove('now');
      S.chips[t].classList.add('now');
      S.now = t;
    }
    const text = asText(h.target.slice(0, s.step), special);
    if (S.text.data !== text) S.text.data = text;
    setText(S.readLabel, `row ${t} read`);
    setText(S.readChip, h.read[t]);
    setText(S.chose, h.target[t]);
    if (S.verdict) {
      S.verdict.replaceChildren('Model\'s top guess: ', chip(st.token), ` (${pct(st.prob)}) `,
        el('span', st.correct ? 'ok' : 'bad', st.correct ? 'matches' : 'differs from'),
        ' the reference ', chip(st.reference), ` (p = ${pct(st.target_prob)}).`);
    }
    if (S.share) {
      const shown = h.source_share[t] !== undefined;
      S.share.style.display = shown ? '' : 'none';
      S.shareCaption.style.display = shown ? '' : 'none';
      if (shown) {
        const v = Math.min(Math.max(h.source_share[t], 0), 1);
        S.share.dataset.source = String(h.source_share[t]);
        setAttr(S.share, 'aria-label', `Step ${s.step}: ${pct(v)} from the source, ${pct(1 - v)} from the target prefix`);
        S.shareFill.style.width = `${v * 100}%`;
        setText(S.shareText, `${pct(v)} source · ${pct(1 - v)} target prefix`);
      }
    }
  }
  if (S.topk) {
    setAttr(S.topk, 'aria-label', `Next token at step ${s.step}`);
    setText(S.topkTitle, `Next token at step ${s.step}`);
    while (S.bars.length > st.top.length) S.bars.pop().forEach((e) => e.remove());
    while (S.bars.length < st.top.length) {
      const name = el('span', 'tok'), bar = el('span', 'bar'), fill = el('span'), p = el('span', 'p');
      bar.appendChild(fill);
      S.topk.append(name, bar, p);
      S.bars.push([name, bar, fill, p]);
    }
    st.top.forEach(([tok, p], i) => {
      const [name, bar, fill, num] = S.bars[i];
      const chosen = tok === st.token, ref = h.teacher && tok === st.reference;
      const hover = `${tok}: p = ${fixed(p, 4)}${chosen ? ' (chosen)' : ''}${ref ? ' (reference)' : ''}`;
      setText(name, tok);
      name.classList.toggle('ref', ref);
      setAttr(name, 'title', hover);
      setAttr(bar, 'title', hover);
      fill.classList.toggle('chosen', chosen);
      const width = `${Math.min(Math.max(p, 0), 1) * 100}%`;
      if (fill.style.width !== width) fill.style.width = width;
      setText(num, pct(p));
    });
  }
}

// The chooser's matrix: a row per layer (its name opens the layer's heads), a button per head (it opens the head).
function buildChooser(s) {
  const h = s.header, k = s.run.kinds[h.kind];
  const box = s.chooser;
  const top = el('div', 'lens-chooser-top');
  top.append(el('span', 'lens-chooser-what', `${KIND_TITLES[h.kind]}: ${k.L} layers × ${k.H} heads`));
  for (const [view, text] of [['mean', 'Mean of heads'], ['grid', 'Every head']]) {
    const b = el('button', `lens-chooser-view${h.view === view ? ' now' : ''}`, text);
    b.type = 'button';
    b.dataset.view = view;
    b.addEventListener('click', () => s.pick(view));
    top.appendChild(b);
  }
  const table = el('div', 'lens-hgrid');
  table.setAttribute('role', 'grid');
  table.style.gridTemplateColumns = `auto repeat(${k.H}, 1fr)`;
  table.appendChild(el('span', 'lens-hcol', ''));
  for (let hd = 0; hd < k.H; hd++) table.appendChild(el('span', 'lens-hcol', `H${hd + 1}`));
  for (let l = 0; l < k.L; l++) {
    const row = el('button', `lens-hl${h.view === 'layer' && h.layer === l ? ' now' : ''}`, `L${l + 1}`);
    row.type = 'button';
    row.dataset.layer = String(l + 1);
    row.title = `Layer ${l + 1}: its ${k.H} heads side by side`;
    row.setAttribute('aria-label', row.title);
    row.addEventListener('click', () => s.pick('layer', l));
    table.appendChild(row);
    for (let hd = 0; hd < k.H; hd++) {
      const now = h.view === 'head' && h.layer === l && h.head === hd;
      const b = el('button', `lens-hc${now ? ' now' : ''}`, String(hd + 1));
      b.type = 'button';
      b.dataset.layer = String(l + 1);
      b.dataset.head = String(hd + 1);
      b.title = `Layer ${l + 1}, head ${hd + 1}`;
      b.setAttribute('aria-label', b.title);
      b.addEventListener('click', () => s.pick('head', l, hd));
      table.appendChild(b);
    }
  }
  box.replaceChildren(top, table);
}

function chooserLabel(s) {
  const h = s.header, k = s.run.kinds[h.kind];
  if (h.view === 'head') return `L${Math.min(h.layer, k.L - 1) + 1} · H${Math.min(h.head, k.H - 1) + 1}`;
  if (h.view === 'layer') return `L${Math.min(h.layer, k.L - 1) + 1} · all heads`;
  return h.view === 'mean' ? 'Mean of heads' : 'Every head';
}

function drawBar(s) {
  const m = s.header.m, B = s.buttons;
  setAttr(s.slider, 'max', String(m));
  s.slider.value = String(s.step);
  if (s.slider.disabled !== m <= 1) s.slider.disabled = m <= 1;
  setAttr(s.slider, 'aria-valuetext', `Step ${s.step} of ${m}`);
  setText(s.counter, `${s.step} / ${m}`);
  for (const [name, off] of [['first', s.step <= 1], ['back', s.step <= 1], ['next', s.step >= m],
    ['last', s.step >= m], ['play', m <= 1]]) if (B[name].disabled !== off) B[name].disabled = off;
  if (s.barPlaying !== s.playing) { // play or pause: its icon and words
    s.barPlaying = s.playing;
    B.play.replaceChildren(icon(s.playing ? 'pause' : 'play'));
    const tip = s.playing ? 'Pause (space)' : TIPS.play;
    B.play.title = tip;
    B.play.setAttribute('aria-label', tip);
    B.play.setAttribute('aria-pressed', String(s.playing));
  }
  const label = chooserLabel(s);
  if (s.chooseLabel !== label) {
    s.chooseLabel = label;
    s.choose.replaceChildren(el('span', 'lens-choose-name', 'Heads'), el('span', 'lens-choose-now', label));
    s.choose.title = `Choose a layer or a head (now: ${label})`;
    s.choose.setAttribute('aria-label', s.choose.title);
  }
  if (s.choose.dataset.view !== s.header.view) s.choose.dataset.view = s.header.view;
}

// The view toolbar as the header says (kind, view, layer, head), and what goes with the view under the picture:
// why the run opened on it (fast_note), a preset's note on its kind, and "Switch this head off" in one head.
function drawViews(s) {
  const h = s.header, k = s.run.kinds[h.kind], p = s.pickers;
  const key = VIEW_FIELDS.map((f) => h[f]).join('|'); // a step changes none of it
  if (s.viewsFor === h && s.viewsKey === key) return;
  s.viewsFor = h;
  s.viewsKey = key;
  for (const group of ['kind', 'view']) {
    for (const [value, b] of Object.entries(p[group])) {
      b.setAttribute('aria-pressed', String(h[group] === value));
      b.classList.toggle('now', h[group] === value);
      if (group === 'kind') b.disabled = !s.run.kinds[value];
    }
  }
  for (const [name, n] of [['layer', k.L], ['head', k.H]]) {
    const sel = p[name];
    if (sel.options.length !== n) {
      sel.replaceChildren(...[...Array(n).keys()].map((i) => {
        const o = el('option', '', `${name === 'layer' ? 'L' : 'H'}${i + 1}`);
        o.value = String(i);
        return o;
      }));
    }
    sel.value = String(Math.min(h[name], n - 1));
    sel.disabled = !(h.view === 'head' || (name === 'layer' && h.view === 'layer'));
  }
  if (!s.notes) {
    s.notes = el('div', 'lens-notes');
    s.left.appendChild(s.notes);
  }
  const out = [];
  if (h.fast_note && h.fast_note.view === h.view) out.push(el('p', 'lens-caption lens-fast', h.fast_note.text));
  if (h.note && (!h.note.kind || h.note.kind === KIND_CODES[h.kind])) out.push(el('p', 'lens-caption lens-note', h.note.text));
  if (h.view === 'head' && h.head_off) {
    const name = `${KIND_CODES[h.kind]}:${h.layer + 1}:${h.head + 1}`;
    if ((h.off || []).includes(name)) {
      out.push(el('p', 'lens-caption lens-isoff', `Head ${name} is switched off.`));
    } else {
      const b = el('button', 'lens-headoff', 'Switch this head off');
      b.type = 'button';
      b.title = 'Decode again with this head\'s output set to zero (the model itself is unchanged).';
      b.addEventListener('click', () => { s.report(); if (s.setTrigger) s.setTrigger('head_off', name); });
      out.push(b);
    }
  }
  s.notes.replaceChildren(...out);
}

function draw(s) {
  const h = s.header;
  // the picture's column width, read first: a read after this draw's first change would lay the page out twice
  s.width = Math.max(280, s.left.clientWidth || 680);
  s.scrollTopNow = s.picture.scrollTop;
  s.root.dataset.step = String(s.step);
  if (s.root.dataset.m !== String(h.m)) s.root.dataset.m = String(h.m);
  s.root.classList.toggle('present', !!h.present);
  s.root.classList.toggle('big', window.innerWidth >= 1700);
  s.drawBar();
  const showPicture = h.picture !== 'next';
  const display = showPicture ? '' : 'none';
  if (s.left.style.display !== display) s.left.style.display = display;
  if (showPicture) drawPicture(s);
  drawSide(s);
  if (s.run.audio) drawAudio(s); // the clip's players (audio.js)
  setText(s.caption, (h.captions && h.captions[h.kind]) || h.caption || '');
  drawViews(s);
  drawGoldKey(s);
  if (showPicture) {
    if (s.legendFor !== h.colours) {
      s.legendFor = h.colours;
      const stops = h.colours.map(([at, c]) => `${c} ${(100 * at).toFixed(0)}%`).join(', ');
      s.legendBar.style.background = `linear-gradient(to right, ${stops})`;
    }
    setText(s.legendMax, (s.zmax ?? 1).toPrecision(2).replace(/\.?0+$/, ''));
  }
  // the step on screen, for the panels whose every step's block is on the page (explore.stepper.per_step_html)
  document.documentElement.dataset.lensStep = String(s.step);
  if (s.keepInView) s.keepInView.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  s.keepInView = null;
  s.lastDraw = performance.now();
  s.root.dataset.drawn = String(s.lastDraw);
  s.root.dispatchEvent(new CustomEvent('lens-drawn', { detail: { step: s.step }, bubbles: true, composed: true }));
}

function hover(s, e) {
  const g = s.geometry;
  if (!g) return;
  const p = s.panels.find((x) => e.composedPath().includes(x.canvas));
  if (!p) { s.tip.style.display = 'none'; return; }
  const r = p.canvas.getBoundingClientRect();
  const ki = Math.floor((e.clientX - r.left) / g.cellW), qi = Math.floor((e.clientY - r.top) / g.rowH);
  if (qi < 0 || ki < 0 || qi >= shownRows(s) || ki >= shownKeys(s)) { s.tip.style.display = 'none'; return; }
  const v = valueAt(s, p, qi, ki);
  const err = s.header.max_error;
  s.tip.textContent = '';
  s.tip.append(el('div', '', `query ${g.q[qi]}`), el('div', '', `key ${g.k[ki]}`),
    el('div', '', v === null ? 'masked: this query may not see this key'
      : `weight ${v.toFixed(3)}${err >= 0.0005 ? ` (± ${err.toFixed(3)})` : ''}`));
  if (p.title) s.tip.append(el('div', 'dim', p.title));
  s.tip.style.display = 'block';
  s.tip.style.left = `${Math.min(window.innerWidth - 260, e.clientX + 14)}px`;
  s.tip.style.top = `${e.clientY + 14}px`;
}

// ---- gold links (the header's `gold`, sent with a sentence opened from the Alignment page) ---------------------
// gold: {cells: [[row, column, 1 sure | 0 possible]], links: [[source word, target word, 1 | 0]], source_words,
// target_words, reading}. Drawn over the cross-attention cells (every panel) as outlines: solid for a sure link,
// dashed for a possible one, with a key, a switch to hide them and a text for screen readers.
const GOLD_COLOUR = '#c2185b';
function goldOn(s) {
  const g = s.header.gold;
  return !!(g && g.cells && s.header.kind === 'cross_attention' && !s.goldHidden);
}

function drawGold(s, p, rows, keys, cellW, cellH) {
  const c = p.ctx;
  c.save();
  c.strokeStyle = GOLD_COLOUR;
  for (const [r, k, sure] of s.header.gold.cells) {
    if (r >= rows || k >= keys) continue;
    const inset = Math.min(2, cellW / 6, cellH / 6);
    c.lineWidth = sure ? Math.max(1.5, Math.min(3, cellW / 8)) : Math.max(1, Math.min(2, cellW / 10));
    c.setLineDash(sure ? [] : [Math.max(2, cellW / 6), Math.max(2, cellW / 8)]);
    c.strokeRect(k * cellW + inset, r * cellH + inset, cellW - 2 * inset, cellH - 2 * inset);
  }
  c.restore();
}

function goldText(s) {
  const g = s.header.gold;
  if (!goldOn(s)) return '';
  const name = (l) => `${g.source_words[l[0]]} → ${g.target_words[l[1]]}`;
  const sure = g.links.filter((l) => l[2]).map(name), possible = g.links.filter((l) => !l[2]).map(name);
  return ` Gold links drawn (${g.reading} reading; solid outline sure, dashed possible): sure: ${sure.join(', ') || 'none'}`
    + `${possible.length ? `; possible: ${possible.join(', ')}` : ''}.`;
}

function drawGoldKey(s) {
  const g = s.header.gold;
  if (!s.goldKey) {
    s.goldKey = el('div', 'lens-gold');
    s.goldKey.setAttribute('data-testid', 'lens-gold');
    s.left.insertBefore(s.goldKey, s.picture);
  }
  const shown = !!(g && g.cells && s.header.kind === 'cross_attention' && s.header.picture !== 'next');
  if (s.goldKey.hidden !== !shown) s.goldKey.hidden = !shown;
  if (!shown) return;
  const key = `${s.runId}|${s.goldHidden ? 1 : 0}`;
  if (s.goldKey.dataset.key === key) return;
  s.goldKey.dataset.key = key;
  const box = el('input', 'lens-gold-toggle');
  box.type = 'checkbox';
  box.checked = !s.goldHidden;
  box.id = `lens-gold-${Math.random().toString(36).slice(2)}`;
  box.addEventListener('change', () => { s.goldHidden = !box.checked; s.draw(); });
  const label = el('label', '', `Gold links (${g.links.length})`);
  label.htmlFor = box.id;
  const sure = el('span', 'lens-gold-swatch sure');
  const possible = el('span', 'lens-gold-swatch possible');
  sure.setAttribute('aria-hidden', 'true');
  possible.setAttribute('aria-hidden', 'true');
  s.goldKey.replaceChildren(box, label, sure, el('span', 'lens-label', 'sure'), possible,
    el('span', 'lens-label', 'possible'),
    el('span', 'lens-caption', `from the Alignment page, on the cells of each linked word's pieces (${g.reading} reading)`));
}

// ---- entry point: called on every run of the page that draws the component -------------------------------------
export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let s = STATES.get(parentElement);
  const fresh = !s;
  if (!s) {
    s = create(parentElement);
    s.drawBar = () => drawBar(s);
    s.draw = () => (s.pair ? drawPair(s) : draw(s)); // pair: two runs, one step bar (pair.js)
    s.hover = (e) => hover(s, e);
    STATES.set(parentElement, s);
  }
  s.setState = setStateValue;
  s.setTrigger = component.setTriggerValue;
  active = s;
  bindKeys();
  if (!data) return s.cleanup;
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  // two runs, one step bar: pair.js, appended to this script by the pages that show pairs (pair_stepper.py)
  if (typeof mountPair === 'function' && isPair(bytes)) return mountPair(s, bytes);
  if (s.pair) leavePair(s);
  let run;
  try {
    run = unpack(data instanceof Uint8Array ? data : new Uint8Array(data));
  } catch (err) {
    s.root.textContent = `The stepper could not read this run: ${err.message}`;
    return s.cleanup;
  }
  const h = run.header;
  if (!s.colours) s.colours = lut(h.colours);
  const newRun = h.run_id !== s.runId;
  s.run = run;
  s.header = h;
  let restored = false;
  if (newRun || h.seq !== s.seq) { // the server chose the step (a new run, a link, the tour, a forced token)
    s.stop();
    s.step = Math.max(1, Math.min(h.m, h.step || 1));
    s.reported = s.step;
    s.view = s.viewNow(); // and the view: the header's (pinned by the server to this seq)
    s.reportedView = JSON.stringify(s.view);
    s.pinStep = s.step;
    s.pinView = s.reportedView;
    const kept = fresh ? keptOnPage() : null;
    if (kept && kept.run === h.run_id) { // back on the page: what was on screen, unless the server chose anew
      if (kept.step !== s.step && kept.pinStep === s.step) {
        s.step = Math.max(1, Math.min(h.m, kept.step));
        restored = true;
      }
      const keptView = JSON.stringify(kept.view);
      if (keptView !== s.reportedView && kept.pinView === s.reportedView) {
        Object.assign(h, kept.view);
        s.view = s.viewNow();
        restored = true;
      }
    }
  } else if (s.view) { // the same seq: the view switched here stays (the header keeps the seq's own)
    Object.assign(h, s.view);
  }
  if (!s.run.kinds[h.kind]) h.kind = Object.keys(s.run.kinds)[0];
  s.runId = h.run_id;
  s.seq = h.seq;
  s.layoutKey = null;
  s.step = Math.max(1, Math.min(h.m, s.step));
  s.draw();
  if (!s.chooser.hidden) buildChooser(s);
  // a new run (a sentence sent with Enter) is drawn: the keys are the stepper's again, not the box's still
  // holding the focus (the arrows moved its caret until a click elsewhere)
  const focused = document.activeElement;
  if (newRun && !fresh && typing(focused) && !s.root.contains(focused)) focused.blur();
  keepOnPage(s);
  if (restored) s.keepUrl();
  if ((s.reported !== s.step || s.reportedView !== JSON.stringify(s.viewNow())) && (h.sync || restored)) s.report();
  return s.cleanup;
}
