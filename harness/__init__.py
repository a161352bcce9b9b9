"""What tests, benchmarks and reports share to drive the app from outside, imported as `harness.NAME` from the
project root (benchmarks and reports run as modules, `python -m benchmarks.NAME`; pytest puts the root on the
import path, `pythonpath` in pyproject.toml). Not part of the installed package.

`server` (start a Streamlit server of the app or its replicas behind nginx, and stop them), `browser` (Debian's
Chromium through Playwright, and what Explore's page shows), `st_client` (a Streamlit websocket client that clicks as
the browser does, for load tests) and `explore_session` (Explore over it), `stepper_page` (Explore's stepper on a
plain page with no server, and what a step costs it), `measure` (the step-click loop and the figures benchmarks
report), `models` (random-weight models built in seconds, no download).

Nothing here imports tests/, benchmarks/ or reports/ (tests/test_harness_layout.py). The browser tests' server
fixtures are in tests/browser/conftest.py."""
