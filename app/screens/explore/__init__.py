"""Explore, the default page (`page.py`, run by Streamlit as a script), and the panels it is made of:

- `controls`: the options, the step bar and the view picker;
- `panels`: forcing a token, the live beams, the exports and teacher forcing's reference;
- `analysis`: the readings, the source share and the heads switched off;
- `why`: the logit lens and saliency;
- `stepper`: the client-side stepper on the page and the step it reports back;
- `url`: the page's state in its URL.

Importing this package runs no page: its modules are imported by name.
"""
