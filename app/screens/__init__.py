"""One module per page (explore, leakage_lab, alignment), each run by Streamlit as a script: layout only,
data from app.services, figures from app.render."""
