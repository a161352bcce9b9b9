"""Pure figure builders: arrays and tokens in, plotly figures out, no Streamlit calls. `figures` (heatmaps and
grids), `views` (what a trace shows at a step), `leakage` and `alignment` (those pages' charts)."""
