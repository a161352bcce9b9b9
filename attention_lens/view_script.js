// The notebook view of a Trace (attention_lens.view): one self-contained script, no library, no network.
// It reads the JSON in the view's <script type="application/json"> and draws the attention of one kind at one
// step on a canvas, as the app's Explore page does: every layer x head (grid), one head, or the mean over heads.
// At step s the decoder rows 0..s-1 exist; their decoder self-attention keys are 0..s-1 when decoding and the
// whole reference in teacher forcing (with the causal mask hatched).
(function (root) {
  "use strict";
  const D = JSON.parse(root.querySelector("script.al-data").textContent);
  const S = { kind: D.kind, view: D.view, layer: D.layer, head: D.head, step: D.step, reading: D.reading };
  const $ = (sel) => root.querySelector(sel);
  const canvas = $("canvas.al-canvas"), tip = $(".al-tip"), info = $(".al-info"), slider = $(".al-step");
  const KIND_NAMES = { cross_attention: "Cross-attention", decoder_self_attention: "Decoder self-attention",
                       encoder_self_attention: "Encoder self-attention" };
  let panels = [], timer = null;

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
    const rowsLab = single || m.cols === 1 ? textW(sl.ql) + 8 : 0;
    let cell = Math.floor((width - rowsLab - 24 * m.cols) / (m.cols * sl.k));
    cell = Math.max(2, Math.min(single ? 36 : 26, cell));
    const showLabels = cell >= 11;
    const left = showLabels ? textW(sl.ql) + 8 : 4;
    const bottom = showLabels ? Math.min(140, textW(sl.kl) * 0.75 + 12) : 6;
    const titleH = 18, gap = 14, pw = sl.k * cell, ph = sl.q * cell;
    const rowsOfPanels = Math.ceil(m.list.length / m.cols);
    const cw = left + m.cols * (pw + gap) + 8, ch = rowsOfPanels * (titleH + ph + bottom + gap) + 30;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = cw * ratio; canvas.height = ch * ratio;
    canvas.style.width = cw + "px"; canvas.style.height = ch + "px";
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cw, ch);
    ctx.font = font + "px sans-serif";
    panels = [];
    m.list.forEach((p, idx) => {
      const r = Math.floor(idx / m.cols), c = idx % m.cols;
      const x0 = left + c * (pw + gap), y0 = r * (titleH + ph + bottom + gap) + titleH;
      ctx.fillStyle = "#1f2933"; ctx.textAlign = "left"; ctx.textBaseline = "alphabetic";
      ctx.fillText(p.title, x0, y0 - 5);
      for (let q = 0; q < sl.q; q++) {
        for (let k = 0; k < sl.k; k++) {
          const masked = sl.mask && !sl.mask[q][k];
          ctx.fillStyle = masked ? D.mask_colour : colour(p.at(q, k));
          ctx.fillRect(x0 + k * cell, y0 + q * cell, cell, cell);
          if (masked && cell >= 6) {
            ctx.strokeStyle = "#9a9a9a"; ctx.lineWidth = 1; ctx.beginPath();
            ctx.moveTo(x0 + k * cell + 1, y0 + (q + 1) * cell - 1); ctx.lineTo(x0 + (k + 1) * cell - 1, y0 + q * cell + 1);
            ctx.stroke();
          }
        }
      }
      ctx.strokeStyle = "#c8ced6"; ctx.lineWidth = 1; ctx.strokeRect(x0 + 0.5, y0 + 0.5, pw, ph);
      if (sl.row >= 0) {
        ctx.strokeStyle = D.accent; ctx.lineWidth = 2; ctx.strokeRect(x0 + 1, y0 + sl.row * cell + 1, pw - 2, cell - 2);
      }
      if (showLabels && c === 0) {
        ctx.fillStyle = "#1f2933"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
        sl.ql.forEach((t, q) => { ctx.fillStyle = q === sl.row ? D.accent : "#1f2933"; ctx.fillText(t, x0 - 4, y0 + q * cell + cell / 2); });
      }
      if (showLabels) {
        ctx.fillStyle = "#1f2933"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
        sl.kl.forEach((t, k) => {
          ctx.save(); ctx.translate(x0 + k * cell + cell / 2, y0 + ph + 4); ctx.rotate(-Math.PI / 4);
          ctx.fillText(t, 0, 0); ctx.restore();
        });
      }
      panels.push({ x0, y0, pw, ph, cell, p, sl });
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
    describe();
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
    const k = Math.floor((x - hit.x0) / hit.cell), q = Math.floor((y - hit.y0) / hit.cell);
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
