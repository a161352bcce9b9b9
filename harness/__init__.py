"""What tests and benchmarks share to drive the app from outside: `server` (start a Streamlit server of the app
and stop it), `browser` (Debian's Chromium through Playwright, and what Explore's page shows), `st_client` (a
Streamlit websocket client that clicks as the browser does, for load tests), `stepper_page` (Explore's stepper
on a plain page with no server, and what a step costs it). Benchmarks import these; nothing here imports
benchmarks/. The browser tests' server fixtures are in tests/browser/conftest.py."""
