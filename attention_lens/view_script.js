// The notebook view of a Trace (attention_lens.view): one self-contained script, no library, no network.
// It reads the JSON in the view's <script type="application/json"> and draws the attention of one kind at one
// step on a canvas, as the app's Explore page does: every layer x head (grid), one head, or the mean over heads.
// At step s the decoder rows 0..s-1 exist; their decoder self-attention keys are 0..s-1 when decoding and the
// whole reference in teacher forcing (with the causal mask hatched).
// A speech model's run (D.audio) is drawn as the app's stepper draws it (app/render/stepper/audio.js): under the
// keys of cross- and encoder self-attention the clip's log-mel spectrogram as a strip with its time in seconds, the
// padding as one hatched, labelled band; encoder rows ticked in seconds; two players (the whole clip, the stretch
// the step attends to: the fewest clip columns holding half its cross-attention on the clip) with Web Audio.
(function (root) {
  "use strict";
  const D = JSON.parse(root.querySelector("script.al-data").textContent);
  const S = { kind: D.kind, view: D.view, layer: D.layer, head: D.head, step: D.step, reading: D.reading };
  const $ = (sel) => root.querySelector(sel);
  const canvas = $("canvas.al-canvas"), tip = $(".al-tip"), info = $(".al-info"), slider = $(".al-step");
  const KIND_NAMES = { cross_attention: "Cross-attention", decoder_self_attention: "Decoder self-attention",
                       encoder_self_attention: "Encoder self-attention" };
  let panels = [], timer = null;
  const A = D.audio || null;
  const STRIP = { head: 64, mean: 40, grid: 28 }; // the strip's height per view, px
  const TICKS = [0.1, 0.2, 0.5, 1, 2, 5, 10]; // seconds between two labelled times
  const MEL_RAMP = [[0, [255, 255, 255]], [0.5, [176, 168, 160]], [1, [26, 26, 26]]]; // quiet -> loud, grey
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  if (A) {
    A.clip = A.padding ? A.padding.index : A.times.length;
    A.codes = bytes(A.mel.codes);
    A.pcm = A.samples ? new Int16Array(bytes(A.samples.pcm).buffer) : null;
  }

  function option(select, value, text) {
    const o = document.createElement("option"); o.value = value; o.textContent = text; select.appendChild(o);
  }
  function fill(select, items, value) {
    select.innerHTML = ""; items.forEach(([v, t]) => option(select, v, t)); select.value = String(value);
  }
  const range = (n) => Array.from({ length: n }, (_, i) => i);

  function arrays() { return D.readings[S.reading][S.kind]; }
  function sizes() { const w = arrays(); return [w.length, w[0].length]; }

  function setupControls() {
    fill($(".al-kind"), Object.keys(KIND_NAMES).map((k) => [k, KIND_NAMES[k]]), S.kind);
    fill($(".al-mode"), [["grid", "All layers × heads"], ["head", "One head"], ["mean", "Mean over heads"]], S.view);
    const readings = Object.keys(D.readings);
    const names = { weights: "Weights", norm_weighted: "Norm-weighted", rollout: "Rollout" };
    fill($(".al-reading"), readings.map((r) => [r, names[r] || r]), S.reading);
    $(".al-reading").style.display = readings.length > 1 ? "" : "none";
    slider.min = 1; slider.max = D.m; slider.value = S.step;
    layerHeadOptions();
  }
  function layerHeadOptions() {
    const [L, h] = sizes();
    S.layer = Math.min(S.layer, L - 1); S.head = Math.min(S.head, h - 1);
    fill($(".al-layer"), range(L).map((i) => [i, "layer " + (i + 1)]), S.layer);
    fill($(".al-head"), range(h).map((i) => [i, "head " + (i + 1)]), S.head);
    $(".al-layer").style.display = S.view === "head" ? "" : "none";
    $(".al-head").style.display = S.view === "head" ? "" : "none";
  }

  // What exists at step s: rows (query indices), keys, row and key labels, the mask (or null).
  function slice() {
    const s = S.step, n = D.source.length;
    const src = D.source.map((t, i) => i + " " + t);
    const rows = range(s).map((i) => i + " " + D.read[i] + " → " + D.wrote[i]);
    if (S.kind === "encoder_self_attention") return { q: n, k: n, ql: src, kl: src, mask: null, row: -1 };
    if (S.kind === "cross_attention") return { q: s, k: n, ql: rows, kl: src, mask: null, row: s - 1 };
    const k = D.teacher ? D.m : s;
    return { q: s, k: k, ql: rows, kl: range(k).map((i) => i + " " + D.read[i]), mask: D.mask, row: s - 1 };
  }

  function colour(v) {
    if (v === null || Number.isNaN(v)) return "#ff00ff";
    const stops = D.colorscale, x = Math.max(0, Math.min(1, v));
    for (let i = 1; i < stops.length; i++) {
      if (x <= stops[i][0]) {
        const [p0, c0] = stops[i - 1], [p1, c1] = stops[i], f = (x - p0) / (p1 - p0 || 1);
        const a = hex(c0), b = hex(c1);
        return "rgb(" + a.map((ai, j) => Math.round(ai + f * (b[j] - ai))).join(",") + ")";
      }
    }
    return stops[stops.length - 1][1];
  }
  function hex(c) { return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)); }

  // ---- a clip's run --------------------------------------------------------------------------------------------
  function melImage() { // the spectrogram at its own resolution: a pixel per mel frame and bin, low bins at the bottom
    if (A.image) return A.image;
    const bins = A.mel.bins, frames = A.mel.frames, c = document.createElement("canvas");
    c.width = Math.max(1, frames); c.height = Math.max(1, bins);
    const g = c.getContext("2d"), img = g.createImageData(c.width, c.height), ramp = [];
    for (let v = 0; v < 256; v++) {
      const f = v / 255, j = f > MEL_RAMP[1][0] ? 1 : 0, [a0, c0] = MEL_RAMP[j], [a1, c1] = MEL_RAMP[j + 1];
      const u = Math.min(1, Math.max(0, (f - a0) / (a1 - a0)));
      ramp.push(c0.map((x, k) => Math.round(x + (c1[k] - x) * u)));
    }
    for (let t = 0; t < frames; t++) {
      for (let b = 0; b < bins; b++) {
        const col = ramp[A.codes[t * bins + b]], at = ((bins - 1 - b) * frames + t) * 4;
        img.data[at] = col[0]; img.data[at + 1] = col[1]; img.data[at + 2] = col[2]; img.data[at + 3] = 255;
      }
    }
    g.putImageData(img, 0, 0);
    A.image = c;
    return c;
  }
  function tickEvery(cellPx, px) { // the least interval whose labels do not overlap
    return TICKS.find((t) => (t * cellPx) / A.frame_s >= px) || TICKS[TICKS.length - 1];
  }
  function isTick(i, tick) {
    if (i >= A.clip) return false;
    if (i === 0) return true;
    return Math.floor(A.times[i] / tick + 1e-6) > Math.floor(A.times[i - 1] / tick + 1e-6);
  }
  const tickText = (i, tick) => (Math.round(A.times[i] / tick) * tick).toFixed(tick < 1 ? 1 : 0) + " s";
  function hatch(ctx, x, y, w, h) {
    ctx.save(); ctx.beginPath(); ctx.rect(x, y, w, h); ctx.clip();
    ctx.fillStyle = "#e4e7eb"; ctx.fillRect(x, y, w, h);
    ctx.strokeStyle = "#8a8a8a"; ctx.lineWidth = 1;
    for (let d = -h; d < w + h; d += 5) { ctx.beginPath(); ctx.moveTo(x + d, y + h); ctx.lineTo(x + d + h, y); ctx.stroke(); }
    ctx.restore();
  }
  // Under a panel's keys: the strip (spectrogram over the clip's columns, the padding band hatched), then the ticks.
  function drawStrip(ctx, x0, y, cell, h, ticks) {
    const clipW = A.clip * cell, covered = A.clip * A.frame_s;
    const drawnW = Math.min(clipW, clipW * (A.mel.frames * A.mel.hop_s) / Math.max(covered, 1e-9));
    const image = melImage();
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(image, 0, 0, image.width, image.height, x0, y, drawnW, h);
    ctx.strokeStyle = "#c8ced6"; ctx.lineWidth = 1; ctx.strokeRect(x0 + 0.5, y + 0.5, A.times.length * cell, h);
    ctx.fillStyle = "#1f2933"; ctx.textBaseline = "top";
    let padLeft = Infinity;
    if (A.padding) {
      const x = x0 + A.padding.index * cell;
      hatch(ctx, x, y, cell, h);
      ctx.textAlign = "right";
      ctx.fillText("padding", x + cell, y + h + 3);
      padLeft = x + cell - ctx.measureText("padding").width - 6;
    }
    ctx.textAlign = "left";
    const tick = tickEvery(cell, ctx.measureText("10.0 s").width + 10);
    for (let i = 0; i < A.clip; i++) {
      if (!isTick(i, tick)) continue;
      const x = x0 + i * cell, label = tickText(i, tick);
      if (x + ctx.measureText(label).width > padLeft) break;
      ctx.fillRect(x, y + h, 1, 3);
      ctx.fillText(label, x, y + h + 3);
      ticks.push(label);
    }
  }
  // Encoder rows of a clip: its times as ticks in the row labels' column, the padding row named.
  function drawRowTicks(ctx, x0, y0, cell, n) {
    ctx.fillStyle = "#1f2933"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
    const tick = tickEvery(cell, 16);
    for (let i = 0; i < n; i++) {
      const pad = A.padding && i === A.padding.index;
      if (pad) ctx.fillText("padding", x0 - 4, y0 + i * cell + cell / 2);
      else if (isTick(i, tick) && !(A.padding && (A.padding.index - i) * cell < 14)) {
        ctx.fillText(tickText(i, tick), x0 - 4, y0 + i * cell + cell / 2);
      }
    }
  }
  // The heads the stretch is read from: one head's when one head of cross-attention is on screen, else every head.
  function stretchHeads() {
    const w = D.readings.weights.cross_attention, L = w.length, H = w[0].length;
    if (S.kind === "cross_attention" && S.view === "head") {
      return { list: [[S.layer, S.head]], what: "layer " + (S.layer + 1) + " · head " + (S.head + 1) };
    }
    const list = [];
    range(L).forEach((l) => range(H).forEach((h) => list.push([l, h])));
    return { list: list, what: "the mean of every head" };
  }
  // The stretch row q attends to: the fewest clip columns, largest first, holding half its weight on the clip.
  function stretchOf(q) {
    const w = D.readings.weights.cross_attention, n = A.clip, sum = new Float64Array(n), heads = stretchHeads();
    heads.list.forEach(([l, h]) => { const row = w[l][h][q]; for (let i = 0; i < n; i++) sum[i] += row[i] || 0; });
    let total = 0;
    for (let i = 0; i < n; i++) total += sum[i];
    if (!(total > 0)) return null;
    const order = range(n).sort((x, y) => sum[y] - sum[x] || x - y);
    let mass = 0, lo = n, hi = -1;
    for (const i of order) {
      mass += sum[i]; lo = Math.min(lo, i); hi = Math.max(hi, i);
      if (mass >= 0.5 * total) break;
    }
    return { lo: lo, hi: hi, start: A.times[lo], end: A.times[hi] + A.frame_s, what: heads.what };
  }
  let audioContext = null, playing = null;
  function playClip(start, end) {
    if (!A.pcm) return;
    audioContext = audioContext || new (window.AudioContext || window.webkitAudioContext)();
    if (playing) { try { playing.stop(); } catch (e) { /* already ended */ } }
    if (!A.buffer) {
      A.buffer = audioContext.createBuffer(1, A.pcm.length, A.samples.rate);
      const ch = A.buffer.getChannelData(0);
      for (let i = 0; i < A.pcm.length; i++) ch[i] = A.pcm[i] / 32768;
    }
    const src = audioContext.createBufferSource();
    src.buffer = A.buffer; src.connect(audioContext.destination);
    const from = Math.max(0, Math.min(start, A.buffer.duration)), to = Math.min(end, A.buffer.duration);
    src.start(0, from, Math.max(0.05, to - from));
    playing = src;
    root.dataset.played = from.toFixed(2) + "-" + to.toFixed(2);
  }

  // The matrices to draw: [{title, w(qi, ki)}], and how many panels per row.
  function matrices() {
    const w = arrays(), [L, h] = sizes();
    if (S.view === "head") {
      return { cols: 1, list: [{ title: KIND_NAMES[S.kind] + " · layer " + (S.layer + 1) + " · head " + (S.head + 1),
                                  at: (q, k) => w[S.layer][S.head][q][k] }] };
    }
    if (S.view === "mean") {
      return { cols: L, list: range(L).map((l) => ({ title: "layer " + (l + 1) + " (mean of heads)",
        at: (q, k) => { let t = 0; for (let j = 0; j < h; j++) t += w[l][j][q][k] || 0; return t / h; } })) };
    }
    const list = [];
    range(L).forEach((l) => range(h).forEach((j) => list.push({ title: "layer " + (l + 1) + " · head " + (j + 1),
                                                                 at: (q, k) => w[l][j][q][k] })));
    return { cols: h, list: list };
  }

  function draw() {
    const sl = slice(), m = matrices(), width = Math.max(320, (root.clientWidth || 900) - 8);
    const single = S.view === "head";
    const font = 12;
    const ctx = canvas.getContext("2d");
    ctx.font = font + "px sans-serif";
    const textW = (labels) => Math.max(...labels.map((t) => ctx.measureText(t).width), 10);
    const audioKeys = !!A && S.kind !== "decoder_self_attention", audioRows = !!A && S.kind === "encoder_self_attention";
    const strip = audioKeys ? STRIP[S.view] || 40 : 0;
    const rowsLab = audioRows ? textW(["padding"]) + 8 : single || m.cols === 1 ? textW(sl.ql) + 8 : 0;
    let cell = Math.floor((width - rowsLab - 24 * m.cols) / (m.cols * sl.k));
    cell = Math.max(2, Math.min(single ? 36 : 26, cell));
    const showLabels = cell >= 11;
    // a clip's cross-attention in one panel a row: rows taller than the columns are wide, so its tokens stay legible
    const rowH = A && S.kind === "cross_attention" && m.cols === 1 ? Math.max(cell, 14) : cell;
    const showRowLabels = rowH >= 11;
    const left = audioRows ? rowsLab : showRowLabels ? textW(sl.ql) + 8 : 4;
    const bottom = audioKeys ? strip + 24 : showLabels ? Math.min(140, textW(sl.kl) * 0.75 + 12) : 6;
    const titleH = 18, gap = 14, pw = sl.k * cell, ph = sl.q * rowH;
    const rowsOfPanels = Math.ceil(m.list.length / m.cols);
    const cw = left + m.cols * (pw + gap) + 8, ch = rowsOfPanels * (titleH + ph + bottom + gap) + 30;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = cw * ratio; canvas.height = ch * ratio;
    canvas.style.width = cw + "px"; canvas.style.height = ch + "px";
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cw, ch);
    ctx.font = font + "px sans-serif";
    panels = [];
    const ticks = [], stretch = A ? stretchOf(Math.min(S.step, D.m) - 1) : null;
    m.list.forEach((p, idx) => {
      const r = Math.floor(idx / m.cols), c = idx % m.cols;
      const x0 = left + c * (pw + gap), y0 = r * (titleH + ph + bottom + gap) + titleH;
      ctx.fillStyle = "#1f2933"; ctx.textAlign = "left"; ctx.textBaseline = "alphabetic";
      ctx.fillText(p.title, x0, y0 - 5);
      for (let q = 0; q < sl.q; q++) {
        for (let k = 0; k < sl.k; k++) {
          const masked = sl.mask && !sl.mask[q][k];
          ctx.fillStyle = masked ? D.mask_colour : colour(p.at(q, k));
          ctx.fillRect(x0 + k * cell, y0 + q * rowH, cell, rowH);
          if (masked && cell >= 6) {
            ctx.strokeStyle = "#9a9a9a"; ctx.lineWidth = 1; ctx.beginPath();
            ctx.moveTo(x0 + k * cell + 1, y0 + (q + 1) * cell - 1); ctx.lineTo(x0 + (k + 1) * cell - 1, y0 + q * cell + 1);
            ctx.stroke();
          }
        }
      }
      ctx.strokeStyle = "#c8ced6"; ctx.lineWidth = 1; ctx.strokeRect(x0 + 0.5, y0 + 0.5, pw, ph);
      if (sl.row >= 0) {
        ctx.strokeStyle = D.accent; ctx.lineWidth = 2; ctx.strokeRect(x0 + 1, y0 + sl.row * rowH + 1, pw - 2, rowH - 2);
      }
      if (audioRows && c === 0) drawRowTicks(ctx, x0, y0, cell, sl.q);
      if (audioKeys) {
        drawStrip(ctx, x0, y0 + ph + 3, cell, strip, ticks);
        if (stretch && S.kind === "cross_attention") {
          ctx.strokeStyle = D.accent; ctx.lineWidth = 2;
          ctx.strokeRect(x0 + stretch.lo * cell + 1, y0 + ph + 4, Math.max(2, (stretch.hi - stretch.lo + 1) * cell - 2), strip - 2);
        }
      }
      if (showRowLabels && !audioRows && c === 0) {
        ctx.fillStyle = "#1f2933"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
        sl.ql.forEach((t, q) => { ctx.fillStyle = q === sl.row ? D.accent : "#1f2933"; ctx.fillText(t, x0 - 4, y0 + q * rowH + rowH / 2); });
      }
      if (showLabels && !audioKeys) {
        ctx.fillStyle = "#1f2933"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
        sl.kl.forEach((t, k) => {
          ctx.save(); ctx.translate(x0 + k * cell + cell / 2, y0 + ph + 4); ctx.rotate(-Math.PI / 4);
          ctx.fillText(t, 0, 0); ctx.restore();
        });
      }
      panels.push({ x0, y0, pw, ph, cell, rowH, p, sl });
    });
    // colour scale, 0 to 1
    const by = ch - 18, bw = 160, bx = left;
    for (let i = 0; i < bw; i++) { ctx.fillStyle = colour(i / (bw - 1)); ctx.fillRect(bx + i, by, 1, 10); }
    ctx.fillStyle = "#1f2933"; ctx.textAlign = "left"; ctx.textBaseline = "middle";
    ctx.fillText("0", bx - 10, by + 5); ctx.fillText("1", bx + bw + 4, by + 5);
    if (S.kind === "decoder_self_attention" && sl.mask) {
      ctx.fillStyle = D.mask_colour; ctx.fillRect(bx + bw + 24, by, 10, 10);
      ctx.fillStyle = "#1f2933"; ctx.fillText("masked (the row could not see this key)", bx + bw + 40, by + 5);
    }
    if (A) {
      root.dataset.strip = audioKeys ? JSON.stringify({ top: panels[0].y0 + panels[0].ph + 3, height: strip,
                                                        left: panels[0].x0, bottom: panels[0].y0 + panels[0].ph }) : "";
      root.dataset.ticks = ticks.slice(0, ticks.length / m.list.length).join("|");
      describeStretch(stretch);
    }
    describe();
  }

  function describeStretch(st) {
    const q = Math.min(S.step, D.m) - 1, token = D.wrote[q] === undefined ? "" : " (“" + D.wrote[q] + "”)";
    $(".al-stretch-text").textContent = st
      ? "Step " + (q + 1) + token + " attends most to " + st.start.toFixed(2) + "–" + st.end.toFixed(2) + " s (" + st.what + ")"
      : "Step " + (q + 1) + token + " puts no weight on the clip";
    root.dataset.stretch = st ? st.start.toFixed(2) + "-" + st.end.toFixed(2) : "";
    $(".al-play-stretch").disabled = !A.pcm || !st;
    A.stretch = st;
  }

  function describe() {
    const s = S.step, t = D.steps[s - 1];
    slider.value = s;
    $(".al-count").textContent = "step " + s + " / " + D.m;
    const prob = (p) => (p === null ? "–" : p.toFixed(3));
    const top = t.top_k.map((x) => x.token + " " + prob(x.prob)).join(" · ");
    info.textContent = "Read " + D.read[s - 1] + " → " + (D.teacher ? "model's top guess " : "wrote ") + t.token +
      " (p = " + prob(t.prob) + ").  Top: " + top + ".  So far: " + D.wrote.slice(0, s).join(" ");
  }

  function go(s) { S.step = Math.max(1, Math.min(D.m, s)); draw(); }
  function play() {
    if (timer) { clearInterval(timer); timer = null; $(".al-play").textContent = "▶ play"; return; }
    if (S.step >= D.m) go(1);
    $(".al-play").textContent = "❚❚ pause";
    timer = setInterval(() => { if (S.step >= D.m) play(); else go(S.step + 1); }, 700);
  }

  $(".al-kind").onchange = (e) => { S.kind = e.target.value; layerHeadOptions(); draw(); };
  $(".al-mode").onchange = (e) => { S.view = e.target.value; layerHeadOptions(); draw(); };
  $(".al-layer").onchange = (e) => { S.layer = +e.target.value; draw(); };
  $(".al-head").onchange = (e) => { S.head = +e.target.value; draw(); };
  $(".al-reading").onchange = (e) => { S.reading = e.target.value; draw(); };
  slider.oninput = (e) => go(+e.target.value);
  $(".al-first").onclick = () => go(1);
  $(".al-prev").onclick = () => go(S.step - 1);
  $(".al-next").onclick = () => go(S.step + 1);
  $(".al-last").onclick = () => go(D.m);
  $(".al-play").onclick = play;
  if (A) {
    $(".al-play-clip").onclick = () => playClip(0, A.duration_s);
    $(".al-play-stretch").onclick = () => { if (A.stretch) playClip(A.stretch.start, A.stretch.end); };
  }
  root.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT") return;
    const keys = { ArrowLeft: () => go(S.step - 1), ArrowRight: () => go(S.step + 1), Home: () => go(1),
                   End: () => go(D.m), " ": play };
    if (keys[e.key]) { keys[e.key](); e.preventDefault(); }
  });
  canvas.addEventListener("mousemove", (e) => {
    const box = canvas.getBoundingClientRect(), x = e.clientX - box.left, y = e.clientY - box.top;
    const hit = panels.find((P) => x >= P.x0 && x < P.x0 + P.pw && y >= P.y0 && y < P.y0 + P.ph);
    if (!hit) { tip.style.display = "none"; return; }
    const k = Math.floor((x - hit.x0) / hit.cell), q = Math.floor((y - hit.y0) / hit.rowH);
    const masked = hit.sl.mask && !hit.sl.mask[q][k], v = hit.p.at(q, k);
    tip.textContent = hit.p.title + "\n" + hit.sl.ql[q] + "\n  → " + hit.sl.kl[k] + ": " +
      (masked ? "masked" : v === null ? "–" : v.toFixed(3));
    tip.style.left = (x + 14) + "px"; tip.style.top = (y + 14) + "px"; tip.style.display = "block";
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  setupControls();
  draw();
  root.setAttribute("data-ready", "1");
// The root by its id; failing that (a page that renamed ids), the view around this script.
})(document.getElementById("__ROOT_ID__") || document.currentScript.closest(".al-view"));
