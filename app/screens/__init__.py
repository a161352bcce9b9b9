"""The app's pages, each run by Streamlit as a script (layout only: data from attention_lens.app.services, figures from
app.render), and the panels they are made of:

- `explore` (the default page), with `explore_controls` (options, step bar, view picker), `explore_panels` (the
  step's tokens, forcing, beams, exports), `explore_analysis` (readings, the source share, heads off),
  `explore_why` (logit lens and saliency), `kv_cache` (the cache panel), `vocabulary` (unknown and known words),
  `explore_url` (its state in the URL) and `tour` (the guided lesson);
- `leakage_lab`, with `leakage_bugs` (three more bugs) and `leakage_exposure` (training vs inference);
- `alignment`, with `alignment_upload` (your own test file) and `timing` (a speech model's word timings: every
  head ranked as a word timer, the DTW view, the generation config);
- `heads`, with `heads_roles` (what each head attends to) and `heads_progress` (its progress bar's words);
- `compare` (two runs side by side);
- `audio_input`: a speech model's input (a shipped clip, an upload, the microphone; language and task);
- `page_url`: the link state of the pages other than Explore; `charts`: a figure drawn as ECharts, plotly or SVG.
- `explore_stepper`: Explore's client-side stepper on the page and the step it reports back;
- `pair_stepper`: two runs under one client-side step bar (Compare, the Leakage lab's training vs inference);
- `aligned`: what a model trained with guided alignment shows on the Alignment and Compare pages.
"""
