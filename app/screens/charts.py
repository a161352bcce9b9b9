"""Draw a figure on a page: as ECharts where app/render/echarts.py can say it (the browser loads ECharts' code in
a quarter of the time plotly's takes), else as the plotly figure it is."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from app.render import echarts


def draw(fig: go.Figure, key: str, fit_labels: bool = True) -> None:
    drawn = echarts.option(fig, fit_labels=fit_labels)
    if drawn is None:  # e.g. panels drawn as images (very large grids)
        st.plotly_chart(fig, key=key, theme=None, config={"displaylogo": False})
    else:
        st.echarts_chart(drawn, key=key, height=int(fig.layout.height or 450), theme=None,
                         renderer=echarts.renderer(drawn))
