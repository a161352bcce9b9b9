// ---- an audio run (appended to stepper.js, in the same module) ---------------------------------------------------
// A speech model's source axis is its clip: a column per encoder frame (or per few frames, pooled by the server:
// app/render/spectrogram.py) and one last column for the padding. Under the keys of cross-attention and encoder
// self-attention: the clip's log-mel spectrogram as a strip, time in seconds as ticks, the padding as one hatched,
// labelled band. Above the picture: the clip played whole, or the stretch the step on screen attends to (the fewest
// clip columns holding half its cross-attention on the clip: spectrogram.stretch is its Python twin). Nothing here
// asks the server for anything.

const STRIP = { head: 64, layer_mean: 64, mean: 40, layer: 36, grid: 28 }; // the strip's height per view, px
const STRETCH_SHARE = 0.5;
const TICKS = [0.1, 0.2, 0.5, 1, 2, 5, 10]; // seconds between two labelled times
const MEL_RAMP = [[0, [255, 255, 255]], [0.5, [176, 168, 160]], [1, [26, 26, 26]]]; // quiet -> loud: grey, not the weights' blue

// the header's "audio" object with views on its bytes (offsets from the weights' start, each a multiple of 4)
function readAudio(buf, base, a) {
  const mel = new Uint8Array(buf, base + a.mel.offset, a.mel.bins * a.mel.frames);
  const pcm = a.samples.n ? new Int16Array(buf, base + a.samples.offset, a.samples.n) : null;
  return { ...a, melCodes: mel, pcm, clip: a.padding ? a.padding.index : a.times.length, image: null };
}

// the source axis as a person reads it: each column's start time, and "padding" for the band
function audioLabels(s) {
  const a = s.run.audio;
  return s.header.source.map((t, i) => (a.padding && i === a.padding.index ? 'padding' : `${a.times[i].toFixed(2)} s`));
}

function audioStripH(s, view) {
  return STRIP[view] || 40;
}

function melImage(a) { // the spectrogram at its own resolution (a pixel per mel frame and bin, low bins at the bottom)
  if (a.image) return a.image;
  const { bins, frames } = a.mel;
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, frames);
  canvas.height = Math.max(1, bins);
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(canvas.width, canvas.height);
  const ramp = [];
  for (let v = 0; v < 256; v++) {
    const f = v / 255;
    let j = 0;
    while (j < MEL_RAMP.length - 2 && f > MEL_RAMP[j + 1][0]) j++;
    const [[a0, c0], [a1, c1]] = [MEL_RAMP[j], MEL_RAMP[j + 1]];
    const u = Math.min(1, Math.max(0, (f - a0) / (a1 - a0)));
    ramp.push(c0.map((x, k) => Math.round(x + (c1[k] - x) * u)));
  }
  for (let t = 0; t < frames; t++) {
    for (let b = 0; b < bins; b++) {
      const c = ramp[a.melCodes[t * bins + b]], at = ((bins - 1 - b) * frames + t) * 4;
      img.data[at] = c[0]; img.data[at + 1] = c[1]; img.data[at + 2] = c[2]; img.data[at + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  a.image = canvas;
  return canvas;
}

function tickEvery(a, cellW, px) { // the least tick interval whose labels do not overlap
  const perSecond = cellW / a.frame_s;
  return TICKS.find((t) => t * perSecond >= px) || TICKS[TICKS.length - 1];
}

function isTick(a, i, tick) {
  if (i >= a.clip) return false;
  if (i === 0) return true;
  return Math.floor(a.times[i] / tick + 1e-6) > Math.floor(a.times[i - 1] / tick + 1e-6);
}

// A panel's keys row: the spectrogram strip at its top, the labels of the ticks under it, the padding's label.
function audioKeys(s, keys, kEls, cellW, strip) {
  const a = s.run.audio;
  if (s.audioLayout !== s.layoutKey) { s.audioLayout = s.layoutKey; s.audioStrips = []; }
  keys.classList.add('lens-audio');
  keys.style.boxSizing = 'border-box';
  keys.style.paddingTop = `${strip}px`;
  const F = s.geometry ? s.geometry.F : 12;
  const tick = tickEvery(a, cellW, measure(['10.0 s'], F) + 10);
  const padLabelPx = measure(['padding'], F) + 8;
  kEls.forEach((e, i) => {
    const pad = a.padding && i === a.padding.index;
    const nearPad = a.padding && (a.padding.index - i) * cellW < padLabelPx;
    const shown = pad || (isTick(a, i, tick) && !nearPad);
    e.classList.toggle('thin', !shown);
    e.classList.toggle('lens-pad', !!pad);
    if (shown && !pad) e.textContent = `${(Math.round(a.times[i] / tick) * tick).toFixed(tick < 1 ? 1 : 0)} s`;
    if (pad) e.title = s.header.source[i];
  });
  const width = kEls.length * cellW, h = strip - 4;
  const canvas = el('canvas', 'lens-mel');
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(h * dpr));
  canvas.style.width = `${width}px`;
  canvas.style.height = `${h}px`;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `The clip's log-mel spectrogram, ${a.duration_s.toFixed(2)} s, under its columns`);
  const c = canvas.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  const clipW = a.clip * cellW, covered = a.clip * a.frame_s;
  const image = melImage(a);
  const drawnW = Math.min(clipW, clipW * (a.mel.frames * a.mel.hop_s) / Math.max(covered, 1e-9));
  c.imageSmoothingEnabled = true;
  c.drawImage(image, 0, 0, image.width, image.height, 0, 0, drawnW, h);
  if (a.padding) { // the padding: one column, hatched, its whole length in its label
    const x = a.padding.index * cellW;
    c.fillStyle = '#e4e7eb';
    c.fillRect(x, 0, cellW, h);
    c.strokeStyle = '#8a8a8a';
    c.lineWidth = 1;
    for (let y = -cellW; y < h; y += 5) { c.beginPath(); c.moveTo(x, y + cellW); c.lineTo(x + cellW, y); c.stroke(); }
  }
  const mark = el('div', 'lens-stretch');
  mark.style.height = `${h}px`;
  keys.append(canvas, mark);
  s.audioStrips.push({ mark, cellW });
}

// encoder self-attention of a clip: a row per frame, its times as ticks in the row labels' column
function audioRows(s, names, qEls, cellH) {
  const a = s.run.audio;
  names.classList.add('lens-audio');
  const tick = tickEvery(a, cellH, (s.geometry ? s.geometry.F : 12) + 4);
  qEls.forEach((e, i) => {
    const pad = a.padding && i === a.padding.index;
    e.classList.toggle('thin', !(pad || isTick(a, i, tick)));
    if (isTick(a, i, tick) && !pad) e.textContent = `${(Math.round(a.times[i] / tick) * tick).toFixed(tick < 1 ? 1 : 0)} s`;
  });
}

// the heads the stretch is read from: the one panel's (one head, a layer's mean), else every layer and head
function stretchHeads(s) {
  const k = s.run.kinds.cross_attention, h = s.header;
  if (h.kind === 'cross_attention' && (h.view === 'head' || h.view === 'layer_mean')) {
    const layer = Math.min(h.layer, k.L - 1);
    return { panels: [[layer, h.view === 'head' ? [Math.min(h.head, k.H - 1)] : [...Array(k.H).keys()]]],
      what: h.view === 'head' ? `layer ${layer + 1} · head ${Math.min(h.head, k.H - 1) + 1}` : `layer ${layer + 1}'s mean` };
  }
  return { panels: [...Array(k.L).keys()].map((l) => [l, [...Array(k.H).keys()]]), what: 'the mean of every head' };
}

// The stretch row `q` of cross-attention attends to: [first column, last column] of the fewest clip columns, largest
// first, holding STRETCH_SHARE of its weight on the clip; null when it puts none there.
function stretchOf(s, q, panels) {
  const k = s.run.kinds.cross_attention, a = s.run.audio, n = a.clip;
  if (!k || q < 0 || q >= k.lengths.length) return null;
  const w = new Float64Array(n);
  let count = 0;
  for (const [layer, heads] of panels) {
    for (const hd of heads) {
      const at = (layer * k.H + hd) * k.cells + k.starts[q];
      for (let i = 0; i < n; i++) w[i] += k.values[at + i];
      count++;
    }
  }
  let total = 0;
  for (let i = 0; i < n; i++) total += w[i];
  if (!(total > 0)) return null;
  const order = [...Array(n).keys()].sort((x, y) => w[y] - w[x] || x - y);
  let mass = 0, lo = n, hi = -1;
  for (const i of order) {
    mass += w[i];
    lo = Math.min(lo, i);
    hi = Math.max(hi, i);
    if (mass >= STRETCH_SHARE * total) break;
  }
  return { lo, hi, start: a.times[lo], end: a.times[hi] + a.frame_s, share: mass / count };
}

let audioContext = null;
function play(s, start, end) {
  const a = s.run.audio;
  if (!a.pcm) return;
  audioContext = audioContext || new (window.AudioContext || window.webkitAudioContext)();
  if (s.playingSource) { try { s.playingSource.stop(); } catch (e) { /* already ended */ } }
  if (!a.buffer) {
    a.buffer = audioContext.createBuffer(1, a.pcm.length, a.samples.rate);
    const ch = a.buffer.getChannelData(0);
    for (let i = 0; i < a.pcm.length; i++) ch[i] = a.pcm[i] / 32768;
  }
  const src = audioContext.createBufferSource();
  src.buffer = a.buffer;
  src.connect(audioContext.destination);
  const from = Math.max(0, Math.min(start, a.buffer.duration)), to = Math.min(end, a.buffer.duration);
  src.start(0, from, Math.max(0.05, to - from));
  s.playingSource = src;
  s.root.dataset.played = `${from.toFixed(2)}-${to.toFixed(2)}`;
}

// the players over the picture, and the stretch of the step on screen marked on every strip
function drawAudio(s) {
  const a = s.run.audio, h = s.header;
  if (!s.audioBar) {
    s.audioBar = el('div', 'lens-audiobar');
    s.audioBar.setAttribute('data-testid', 'lens-audio');
    const whole = el('button', 'lens-play-clip', '▶ Whole clip');
    whole.type = 'button';
    whole.addEventListener('click', () => play(s, 0, s.run.audio.duration_s));
    const part = el('button', 'lens-play-stretch', '▶ This step’s stretch');
    part.type = 'button';
    part.addEventListener('click', () => { if (s.stretch) play(s, s.stretch.start, s.stretch.end); });
    const said = el('span', 'lens-stretch-text');
    s.audioBar.append(whole, part, said);
    Object.assign(s, { audioWhole: whole, audioPart: part, audioSaid: said });
    s.legendBar.parentElement.appendChild(s.audioBar); // on the legend's line: the picture stays above the fold
  }
  const playable = !!a.pcm;
  s.audioWhole.disabled = !playable;
  const { panels, what } = stretchHeads(s);
  const q = Math.min(s.step, h.m) - 1;
  const st = stretchOf(s, q, panels);
  s.stretch = st;
  s.audioPart.disabled = !playable || !st;
  const token = h.target[q] === undefined ? '' : ` (“${h.target[q]}”)`;
  const text = st ? `Step ${q + 1}${token} attends most to ${st.start.toFixed(2)}–${st.end.toFixed(2)} s (${what})`
    : `Step ${q + 1}${token} puts no weight on the clip`;
  setText(s.audioSaid, text);
  s.root.dataset.stretch = st ? `${st.start.toFixed(2)}-${st.end.toFixed(2)}` : '';
  for (const { mark, cellW } of s.audioStrips || []) {
    const on = !!st && h.kind === 'cross_attention';
    mark.style.display = on ? 'block' : 'none';
    if (on) {
      mark.style.left = `${st.lo * cellW}px`;
      mark.style.width = `${Math.max(2, (st.hi - st.lo + 1) * cellW)}px`;
    }
  }
}
