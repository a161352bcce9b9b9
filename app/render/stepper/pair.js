
// ---- two runs, one step bar (Compare; the Leakage lab's training against inference) ---------------------------
// Appended to stepper.js (same module). The component fed a pair (app/render/stepper: pack_pair): b"LENP", a JSON
// header, then the packed runs one after another. One step bar drives them all: each run shows min(step, its
// own m); above them a line for the step (the header's `notes`), below them, where the header asks (`diff`),
// A − B where rows and columns match (the same token at the same position on both sides, as
// model/analysis/compare.py defines it). Stepping here sends nothing to the server, as with one run.

function isPair(bytes) { // "LENP"
  return bytes.length >= 8 && bytes[0] === 0x4c && bytes[1] === 0x45 && bytes[2] === 0x4e && bytes[3] === 0x50;
}

function unpackPair(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = view.getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + size)));
  let at = 8 + size;
  const runs = header.sizes.map((n) => {
    const run = unpack(bytes.subarray(at, at + n));
    at += n;
    return run;
  });
  return { header, runs };
}

function leavePair(s) { // the same place on the page now shows one run
  s.pair.box.remove();
  Object.assign(s, s.pair.single);
  s.pair = null;
  s.root.classList.remove('lens-pairmode');
}

// A pair's bar reports and keeps in the address bar the step alone: the view is the page's own (its link names it
// in its own words: Compare's head 0 is the mean, the Leakage lab's `view` is the lab's view).
function pairMethods(s) {
  const single = { report: s.report, keepUrl: s.keepUrl };
  s.report = () => {
    if (!s.setState || s.reported === s.step) return;
    s.reported = s.step;
    s.setState('step', s.step);
  };
  s.keepUrl = () => {
    if (s.urlTimer) return;
    s.urlTimer = setTimeout(s.urlWrite = () => {
      s.urlTimer = null;
      if (!s.root.isConnected || !s.header.url_step) return;
      const u = new URL(window.location.href);
      u.searchParams.set('step', String(s.step));
      window.history.replaceState(window.history.state, '', u.toString());
      window.dispatchEvent(new Event('lens-url')); // Copy link's box follows (app/render/share)
    }, 250);
  };
  return single;
}

function mountPair(s, bytes) {
  let pair;
  try {
    pair = unpackPair(bytes);
  } catch (err) {
    s.root.textContent = `The stepper could not read these runs: ${err.message}`;
    return s.cleanup;
  }
  const h = pair.header;
  if (!s.pair) {
    s.root.classList.add('lens-pairmode');
    const box = el('div', 'lens-pair');
    const note = el('div', 'lens-pair-note');
    note.setAttribute('aria-live', 'polite');
    const runs = el('div', 'lens-pair-runs');
    const diff = el('div', 'lens-diff');
    box.append(note, runs, diff);
    s.root.insertBefore(box, s.root.querySelector('.lens-body'));
    s.pair = { box, note, runs, diff, children: [], single: pairMethods(s) };
    diff.addEventListener('mousemove', (e) => hoverDiff(s, e));
    diff.addEventListener('mouseleave', () => { s.tip.style.display = 'none'; });
  }
  const P = s.pair;
  while (P.children.length < pair.runs.length) {
    const col = el('div', 'lens-pair-run');
    const title = el('div', 'lens-pair-title');
    col.appendChild(title);
    P.runs.appendChild(col);
    const c = create(col);
    c.drawBar = () => drawBar(c);
    c.draw = () => draw(c);
    c.hover = (e) => hover(c, e);
    c.root.setAttribute('data-testid', 'lens-pair-side');
    c.root.classList.add('lens-child');
    c.col = col;
    c.titleEl = title;
    P.children.push(c);
  }
  while (P.children.length > pair.runs.length) P.children.pop().col.remove();
  pair.runs.forEach((run, i) => {
    const c = P.children[i];
    if (!c.colours) c.colours = lut(run.header.colours);
    c.run = run;
    c.header = run.header;
    c.runId = run.header.run_id;
    c.layoutKey = null;
    c.titleEl.replaceChildren(...(h.titles?.[i] || []).map((t, j) => el('div', j ? 'lens-pair-sub' : 'lens-pair-name', t)));
  });
  const newRun = h.run_id !== s.runId;
  s.run = pair.runs[0]; // the bar's own reading of the view (the chooser's label) is the first run's
  s.header = { ...pair.runs[0].header, ...h };
  if (newRun || h.seq !== s.seq) { // the server chose the step (new runs, a link, the tour)
    s.stop();
    s.step = Math.max(1, Math.min(h.m, h.step || 1));
    s.reported = s.step;
  }
  s.runId = h.run_id;
  s.seq = h.seq;
  s.step = Math.max(1, Math.min(h.m, s.step));
  s.lastDraw = 0;
  s.draw();
  return s.cleanup;
}

function drawPair(s) {
  const h = s.header, P = s.pair;
  s.root.dataset.step = String(s.step);
  s.root.dataset.m = String(h.m);
  s.root.classList.toggle('present', !!h.present);
  s.root.classList.toggle('big', window.innerWidth >= 1700);
  s.drawBar();
  const mark = Number.isInteger(h.mark_row) ? h.mark_row : -1;
  for (const c of P.children) {
    c.step = Math.max(1, Math.min(c.header.m, s.step));
    c.stepped = s.stepped;
    c.draw();
    // the header's marked row (where two runs part), once the step has reached it
    for (const p of c.panels) p.qEls.forEach((d, i) => d.classList.toggle('lens-marked', i === mark && i < c.step));
  }
  s.stepped = false;
  levelPictures(P.children);
  const note = h.notes && h.notes[s.step - 1];
  if (!('noteShown' in P) || P.noteShown !== note) { // the step's line, written again only for another step's
    P.noteShown = note;
    P.note.replaceChildren();
    P.note.hidden = !note;
    if (note) {
      P.note.append(`${note.text} `, el('span', `lens-badge ${note.tone || ''}`, note.badge), ` ${note.detail || ''}`);
    }
  }
  drawDiff(s);
  s.lastDraw = performance.now();
  s.root.dataset.drawn = String(s.lastDraw);
  s.root.dispatchEvent(new CustomEvent('lens-drawn', { detail: { step: s.step }, bubbles: true, composed: true }));
}

// The runs' pictures levelled, each as tall as the tallest: a picture keeps the height of its run's tallest step
// (stepper.js layout), so two runs of other lengths put their step panels at other heights. Set once per layout
// (nothing moves while stepping); the room for the steps to come fills the shorter picture down to that height.
function levelPictures(children) {
  const shown = children.filter((c) => c.frame && c.header.picture !== 'next');
  const natural = (c) => {
    const kept = c.minH;
    c.minH = 0;
    const px = boxHeight(c);
    c.minH = kept;
    return px;
  };
  const tallest = Math.max(0, ...shown.map(natural));
  for (const c of shown) {
    if (c.minH === tallest) continue;
    c.minH = tallest;
    c.picture.style.minHeight = `${tallest}px`;
    setRoomHeight(c);
    placeRoom(c, c.shownRows, c.geometry.rowH);
    updateMore(c, c.scrollTopNow || 0);
  }
}

function matching(a, b) {
  const out = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] === b[i]) out.push(i);
  return out;
}

// A − B of the first two runs at their steps, over the rows and columns that carry the same token at the same
// position on both sides (a decoder row matches when it read the same token); cells nothing was computed for
// (past a row's keys under the mask) are the Trace's zeros.
function difference(s) {
  const [a, b] = s.pair.children, kind = a.header.kind;
  const rowsOf = (c) => (kind === 'encoder_self_attention' ? c.header.source : c.header.read.slice(0, c.step));
  const keysOf = (c) => (kind === 'decoder_self_attention'
    ? c.header.read.slice(0, c.header.teacher ? c.header.m : c.step) : c.header.source);
  const rows = matching(rowsOf(a), rowsOf(b)), cols = matching(keysOf(a), keysOf(b));
  const pa = a.panels[0], pb = b.panels[0];
  const values = rows.map((q) => cols.map((k) => (valueAt(a, pa, q, k) ?? 0) - (valueAt(b, pb, q, k) ?? 0)));
  return { rows, cols, values };
}

function drawDiff(s) {
  const h = s.header, P = s.pair, box = P.diff;
  P.diffShown = null;
  if (!h.diff || P.children.length < 2 || !P.children[0].panels.length || !P.children[1].panels.length) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const d = difference(s), a = P.children[0];
  const { q, k } = labelsOf(a);
  box.dataset.rows = JSON.stringify(d.rows);
  box.dataset.cols = JSON.stringify(d.cols);
  box.dataset.values = JSON.stringify(d.values.map((r) => r.map((v) => Number(v.toFixed(6)))));
  const title = el('div', 'lens-diff-title', h.diff.title || 'A − B');
  if (!d.rows.length || !d.cols.length) {
    box.replaceChildren(title, el('p', 'lens-pair-info', 'No row and column carry the same token at the same '
      + 'position on both sides: there is no difference to draw.'));
    return;
  }
  let top = 0;
  for (const r of d.values) for (const v of r) top = Math.max(top, Math.abs(v));
  // fixed and symmetric (the page's choice; values past it at full colour): a colour is one amount at every step,
  // where stretching to the largest difference drew -0.004 as saturated as -0.4
  const scale = h.diff.range || 1;
  if (!P.diverging) P.diverging = lut(h.diff.colours);
  const F = fontPx(a);
  const qs = d.rows.map((i) => q[i]), ks = d.cols.map((j) => k[j]);
  // a clip's columns (and encoder rows) are its frames: times as ticks, as under each side (audio.js)
  const audio = a.run.audio && a.header.kind !== 'decoder_self_attention' ? a.run.audio : null;
  const frameRows = audio && a.header.kind === 'encoder_self_attention';
  const labelW = Math.min(0.3 * (box.clientWidth || 680), measure(qs, F) + 10);
  const avail = Math.max(120, (box.clientWidth || 680) - labelW - 24);
  const cellW = Math.max(audio ? 2 : 4, Math.min(64, avail / ks.length));
  const cellH = frameRows ? cellW : Math.max(F + 8, Math.min(34, cellW));
  const keyW = measure(ks, F);
  const upright = !audio && keyW + 6 > cellW;
  const dpr = window.devicePixelRatio || 1;
  const canvas = el('canvas');
  canvas.width = Math.round(cellW * ks.length * dpr);
  canvas.height = Math.round(cellH * qs.length * dpr);
  canvas.style.width = `${cellW * ks.length}px`;
  canvas.style.height = `${cellH * qs.length}px`;
  canvas.setAttribute('aria-hidden', 'true');
  const c = canvas.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  const numbers = cellW >= 6 * (F - 2) * 0.62 && qs.length * ks.length <= 400;
  c.font = `${F - 2}px 'DejaVu Sans Mono', Menlo, monospace`;
  c.textAlign = 'center';
  c.textBaseline = 'middle';
  d.values.forEach((r, i) => r.forEach((v, j) => {
    const u = Math.max(0, Math.min(255, Math.round(((v / scale) + 1) / 2 * 255)));
    c.fillStyle = P.diverging[u];
    c.fillRect(j * cellW + 0.5, i * cellH + 0.5, cellW - 1, cellH - 1);
    if (numbers) {
      c.fillStyle = Math.abs(v / scale) > 0.55 ? '#fff' : '#1f2933';
      const text = Math.abs(v) < 0.005 ? '0' : `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(2)}`;
      c.fillText(text, j * cellW + cellW / 2, i * cellH + cellH / 2);
    }
  }));
  // .lens-qlabels and .lens-panel contain their size (stepper.css): their heights are set here, the keys' row
  // placed under the rows (it is positioned in the panel)
  const rowsH = cellH * qs.length, keysH = upright ? Math.min(140, keyW + 8) : F + 8;
  const names = el('div', `lens-qlabels${frameRows ? ' lens-audio' : ''}`);
  names.style.width = `${labelW}px`;
  names.style.height = `${rowsH}px`;
  names.style.fontSize = `${F}px`;
  const rowTick = frameRows ? tickEvery(audio, cellH, F + 4) : 0;
  qs.forEach((t, i) => {
    const e = el('div', 'lens-q', t);
    e.style.height = e.style.lineHeight = `${cellH}px`;
    e.title = t;
    if (frameRows) timeTick(audio, e, d.rows[i], rowTick);
    names.appendChild(e);
  });
  const keys = el('div', `lens-klabels${audio ? ' lens-audio' : ''}`);
  keys.style.width = `${cellW * ks.length}px`;
  keys.style.fontSize = `${F}px`;
  keys.style.height = `${keysH}px`;
  keys.style.top = `${rowsH}px`;
  const keyTick = audio ? tickEvery(audio, cellW, measure(['10.0 s'], F) + 10) : 0;
  ks.forEach((t, j) => {
    const e = el('span', `lens-k${upright ? ' up' : ''}`, t);
    const w = upright ? Math.max(cellW, F + 2) : cellW;
    e.style.width = `${w}px`;
    if (w !== cellW) e.style.margin = `0 ${(cellW - w) / 2}px`; // centred on its column, in the row's flow
    e.title = t;
    if (audio) timeTick(audio, e, d.cols[j], keyTick);
    keys.appendChild(e);
  });
  const panel = el('div', 'lens-panel');
  panel.style.width = `${cellW * ks.length}px`;
  panel.style.height = `${rowsH + keysH}px`;
  const wrap = el('div', 'lens-cells');
  wrap.appendChild(canvas);
  panel.append(wrap, keys);
  const row = el('div', 'lens-prow');
  row.append(names, panel);
  const legend = el('div', 'lens-legend');
  const bar = el('span', 'lens-legend-bar');
  bar.style.background = `linear-gradient(to right, ${h.diff.colours.map(([at, col]) => `${col} ${(100 * at).toFixed(0)}%`).join(', ')})`;
  legend.append(el('span', 'lens-label', 'A − B'), el('span', 'lens-diff-low', `−${scale.toFixed(2)}`), bar,
    el('span', 'lens-diff-high', `+${scale.toFixed(2)}`));
  const what = el('p', 'lens-caption', `Blue: A put more weight there, red: B did. ${d.rows.length} of the rows and `
    + `${d.cols.length} of the columns match (same token, same position); largest difference ${top.toFixed(3)}; `
    + `colours from −${scale.toFixed(2)} to +${scale.toFixed(2)}, beyond them full colour.`);
  const picture = el('div', 'lens-picture');
  picture.setAttribute('role', 'img');
  picture.setAttribute('aria-label', `${h.diff.title}: ${qs.length} × ${ks.length} (matching queries × keys), `
    + `largest difference ${top.toFixed(3)}.`);
  picture.appendChild(row);
  box.replaceChildren(title, legend, picture, what);
  P.diffShown = { d, qs, ks, cellW, cellH, canvas };
}

// a clip's frame label in A − B: its time where a tick falls (audio.js isTick), "padding" on the padding, else
// hidden (its full label stays in the hover title)
function timeTick(a, e, i, tick) {
  const pad = a.padding && i === a.padding.index;
  const shown = pad || isTick(a, i, tick);
  e.classList.toggle('thin', !shown);
  if (shown && !pad) e.textContent = `${(Math.round(a.times[i] / tick) * tick).toFixed(tick < 1 ? 1 : 0)} s`;
}

function hoverDiff(s, e) {
  const g = s.pair && s.pair.diffShown;
  if (!g || e.target !== g.canvas) { s.tip.style.display = 'none'; return; }
  const r = g.canvas.getBoundingClientRect();
  const j = Math.floor((e.clientX - r.left) / g.cellW), i = Math.floor((e.clientY - r.top) / g.cellH);
  if (i < 0 || j < 0 || i >= g.qs.length || j >= g.ks.length) { s.tip.style.display = 'none'; return; }
  const v = g.d.values[i][j];
  s.tip.replaceChildren(el('div', '', `query ${g.qs[i]}`), el('div', '', `key ${g.ks[j]}`),
    el('div', '', `A − B = ${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(4)}`));
  s.tip.style.display = 'block';
  s.tip.style.left = `${Math.min(window.innerWidth - 260, e.clientX + 14)}px`;
  s.tip.style.top = `${e.clientY + 14}px`;
}
