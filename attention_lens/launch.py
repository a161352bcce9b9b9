"""`python -m attention_lens.launch run app/streamlit_app.py [options]`: Streamlit's own command line (the same
arguments as `streamlit`), with one change: its HTTP server reads a request's head (the request line with the
address, and the headers) up to LONGEST_REQUEST_HEAD bytes, so that any link a browser can open reaches the app.

Every page keeps its state in the address (`/?text=...`), and a link with a long text is a long request line.
Streamlit serves through uvicorn, whose HTTP parser (h11) refuses a request head of more than 16 KiB that arrives
in more than one piece, as it does across a network: the server answers 400 and closes while the browser is
still sending, so the visitor saw a reset connection instead of the app. Streamlit has no option for that limit;
uvicorn reads it, per connection, from h11_impl.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE whenever its config leaves
`h11_max_incomplete_event_size` unset (Streamlit leaves it unset), so this module raises that default before
Streamlit starts its server. The app then answers a text longer than it takes with a page saying so
(app/screens/explore/url.py). ./run.sh app, `attention-lens app`, deploy/serve.py's replicas, the Docker image and
the tests' servers start the app this way; nginx in front of replicas takes request lines as long
(deploy/nginx.conf.template).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading

# Chromium opens addresses of up to 2 MiB (its kMaxURLChars); the rest of a head (cookies, a referrer Chromium cuts
# to 4 KiB) fits the 64 KiB added. deploy/nginx.conf.template's large_client_header_buffers is the same size.
LONGEST_REQUEST_HEAD = 2 * 1024 * 1024 + 64 * 1024


def allow_long_request_heads(limit: int = LONGEST_REQUEST_HEAD) -> None:
    """uvicorn's HTTP/1.1 connections opened from now on read request heads of up to `limit` bytes."""
    from uvicorn.protocols.http import h11_impl

    if not hasattr(h11_impl, "DEFAULT_MAX_INCOMPLETE_EVENT_SIZE"):  # a uvicorn that reads its limit elsewhere
        raise RuntimeError("uvicorn.protocols.http.h11_impl has no DEFAULT_MAX_INCOMPLETE_EVENT_SIZE: "
                           "attention_lens.launch cannot raise its request head limit for this uvicorn version")
    h11_impl.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE = max(limit, h11_impl.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE)


def import_app_early() -> threading.Thread | None:
    """The app's heavy imports (torch and the model code, plotly, pandas: app/warmup.py imports what the pages use)
    on a thread while Streamlit starts its server, so that the first visitor's page does not wait for them (it
    was blank for ~4.8 s); the page's own imports then find them done, or wait for the thread's. Off with
    LENS_WARMUP=0, as the rest of the warm-up."""
    if os.environ.get("LENS_WARMUP", "1") == "0":
        return None

    def run() -> None:
        try:
            importlib.import_module("attention_lens.app.warmup")
        except Exception:  # the page imports it again, and says what is wrong there
            logging.getLogger(__name__).warning("early import of the app failed", exc_info=True)

    thread = threading.Thread(target=run, name="lens-imports", daemon=True)
    thread.start()
    return thread


def main(argv: list[str] | None = None) -> None:
    allow_long_request_heads()
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["run"]:
        import_app_early()
    from streamlit.web import cli

    sys.argv = ["streamlit", *args]
    cli.main(prog_name="streamlit")  # as `python -m streamlit` calls it (click exits with Streamlit's code)


if __name__ == "__main__":
    main()
