"""The Streamlit app, an importable package (`streamlit run app/streamlit_app.py`; the project is installed
into the venv with `pip install -e .`, so `app` and `model` import from anywhere, with no sys.path edits).

- `streamlit_app`: navigation only;
- `services`: the only module that calls model/: cached engines, traces and analyses;
- `state`: session keys, presets, the model picker, inputs, the page header, `text` (escaping);
- `screens/`: the five pages (Explore, Leakage lab, Alignment, Heads, Compare) and their panels, layout only;
- `render/`: figure builders (arrays and tokens in, figures or markup out; only `render.preload` calls Streamlit);
- `exports`: PNG / SVG / HTML / CSV / JSON / NPZ bytes of one trace;
- `uploads`: an uploaded file of sentence pairs read and checked (size, encoding, columns), said in one line;
- `timing_files`: clips with gold word timings for a speech model's head ranking (the shipped test clips or an
  upload): an upload's problem said in one line, the files written as the ranking reads them;
- `nonfinite`: where a run first holds NaN or infinity (a diverged model), said in one line;
- `registry`: which model folders this server may open (its operator decides);
- `warmup`: first-time costs (kaleido, the first ablated run, the first Leakage lab plot) paid on a background
  thread when the server draws its first page.
"""
