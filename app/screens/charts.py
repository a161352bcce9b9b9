"""Draw a figure on a page: as ECharts where app/render/echarts.py can say it (the browser loads ECharts' code in
a quarter of the time plotly's takes), else as the plotly figure it is; or SVG markup as it is (`svg`: no chart
library to load at all)."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import streamlit as st
from attention_lens.app.render import echarts


def draw(fig: go.Figure, key: str, fit_labels: bool = True, width: float = echarts.ASSUMED_WIDTH) -> None:
    """width: the px of the column the chart sits in on a 1366-wide screen (echarts.option sizes it)."""
    drawn = echarts.option(fig, fit_labels=fit_labels, width=width)
    if drawn is None:  # e.g. panels drawn as images (very large grids)
        st.plotly_chart(fig, key=key, theme=None, config={"displaylogo": False})
    else:
        height = drawn.pop(echarts.HEIGHT_KEY)  # the rows' height, laid out for the chart's width
        st.echarts_chart(drawn, key=key, height=height, theme=None, renderer=echarts.renderer(drawn))


def svg(markup: str, key: str) -> None:
    """SVG markup (app/render/alignment_svg.py) on the page, in a container with this key. st.html's sanitiser
    keeps HTML only and would strip an <svg>, so a script of the element's own puts the markup in place (as
    app/render/preload.py runs one): the markup travels as a JSON string with every `<` escaped, so no text in
    it can end the script. The Html element's code is already loaded by every page; nothing else is."""
    literal = json.dumps(markup).replace("<", "\\u003c")
    st.container(key=key).html(
        f"<div class='lens-svg' data-chart='{key}'></div>"
        f"<script>document.currentScript.previousElementSibling.innerHTML = {literal};</script>",
        unsafe_allow_javascript=True)
