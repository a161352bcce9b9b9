"""The app's pages, each run by Streamlit as a script (layout only: data from attention_lens.app.services, figures from
app.render), and the panels they are made of:

- `explore/` (the default page, `explore/page.py`, and its own panels, stepper and URL state: see its package),
  with `kv_cache` (the cache panel), `vocabulary` (unknown and known words) and `tour` (the guided lesson);
- `leakage_lab`, with `leakage_bugs` (three more bugs) and `leakage_exposure` (training vs inference);
- `alignment`, with `alignment_upload` (your own test file) and `timing` (a speech model's word timings: every
  head ranked as a word timer, the DTW view, the generation config);
- `heads`, with `heads_roles` (what each head attends to) and `heads_progress` (its progress bar's words);
- `compare` (two runs side by side), with `compare_clips` (a speech model's clip on each side);
- `audio_input`: a speech model's input (a shipped clip, an upload, the microphone; language and task);
- `page_url`: the link state of the pages other than Explore; `charts`: a figure drawn as ECharts, plotly or SVG.
- `pair_stepper`: two runs under one client-side step bar (Compare, the Leakage lab's training vs inference);
- `guided_alignment`: what a model trained with guided alignment shows on the Alignment and Compare pages.
"""
