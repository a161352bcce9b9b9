"""Figure builders: arrays and tokens in, plotly figures, ECharts options, SVG or HTML out; no Streamlit calls
except in `preload`, which puts the browser's preload links on the page.

- `figures`: heatmaps and grids; `views`: what a trace shows at a step; `echarts`: a plotly figure as an ECharts
  option; `bars`: the next-token distribution; `beams`: the beam table and pieces back to text;
- `leakage`, `bugs`, `exposure`: the Leakage lab's charts; `alignment`, `alignment_svg`, `alignment_agreement`:
  the Alignment page's tables, drawings and head agreement;
- `contrib`: contributions and ablation; `why`: the logit lens and saliency; `roles`: the heads' roles table;
  `compare`: the Compare page; `kv_cache`: the key-value cache drawing and its work table;
- `preload`: the browser's heaviest chart scripts fetched as soon as a page opens; `page_style`: style rules for
  every page (a cached function's spinner spans its row);
- `spectrogram`: a clip's run for the browser (frames pooled, its log-mel and samples for the strip and playing);
- `stepper`: Explore's whole run packed for the browser's stepper (stepper.js, stepper.css);
- `alignment_breakdown`: small SVG plots of an alignment's error breakdown and each head's sinks;
- `timing`: a speech model's DTW view (the head set's cross-attention with the warping path, the spectrogram with
  gold and model word boundaries);
- `share`: Copy link's box, the page's link as the address bar holds it (share_link.js, share_link.css).
"""
