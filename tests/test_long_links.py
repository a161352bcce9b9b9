"""A link with a long text (`/?text=` of 100,000 characters) reaches the app, which says the text is too long
(tests/app/shared/test_long_link_text.py), instead of a reset connection (the app's HTTP server refused a request head
over 16 KiB that arrived in pieces, as it does across a network) or nginx's bare 414 page (its 8 KiB request
line). The app's server is started as ./run.sh app starts it (attention_lens/launch.py); the replicas behind nginx
as ./run.sh serve does (deploy/serve.py, deploy/nginx.conf.template)."""

from __future__ import annotations

import os
import socket
import time
from urllib.parse import urlencode, urlsplit

import pytest

from attention_lens.launch import LONGEST_REQUEST_HEAD
from deploy import serve
from harness.browser import CHROMIUM, IDLE, ROW_SHOWN, launch
from harness.server import app_env, served, served_replicas

LONG = ("the cat sat on the mat . " * 4000)[:100_000]
SEGMENT = 1460  # bytes: a TCP segment's payload on an Ethernet network
NO_NGINX = "nginx is not installed (apt-get install -y nginx)"


def get(url: str, query: dict[str, str], piece: int = SEGMENT) -> tuple[int | None, bytes]:
    """GET url?query with the request sent in pieces of `piece` bytes, as a request crossing a network arrives.
    Returns (the response's status, its bytes), or (None, what came back) when the connection was reset or
    closed before a response."""
    parts = urlsplit(url)
    head = (f"GET /?{urlencode(query)} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n"
            "Accept: text/html\r\n\r\n").encode()
    got = b""
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for i in range(0, len(head), piece):
                s.sendall(head[i:i + piece])
                time.sleep(0.0002)
            while chunk := s.recv(65536):
                got += chunk
        except OSError:  # reset: the server closed while the request was still coming
            return None, got
    status = got.split(b"\r\n", 1)[0].split()
    return (int(status[1]) if len(status) > 1 else None), got


@pytest.mark.slow
def test_a_long_link_reaches_the_app_when_it_arrives_in_pieces():
    with served(app_env(LENS_WARMUP="0")) as (url, _):
        status, body = get(url, {"text": LONG})
        assert status == 200, body[:200]
        assert b'id="root"' in body  # Streamlit's page, which then says the text is too long


@pytest.fixture(scope="module")
def behind_nginx():
    if serve.find_nginx() is None:
        pytest.skip(NO_NGINX)
    with served_replicas(1, app_env(LENS_WARMUP="0", LENS_DEFAULT_MODEL="en-fr")) as (url, _, _):
        yield url


@pytest.mark.slow
@pytest.mark.nginx
def test_nginx_passes_a_long_link_on_and_refuses_a_longer_one_in_the_apps_words(behind_nginx):
    status, body = get(behind_nginx, {"text": LONG})
    assert status == 200 and b'id="root"' in body, body[:300]
    status, body = get(behind_nginx, {"text": "a" * (LONGEST_REQUEST_HEAD + 1024)}, piece=1 << 20)
    assert status == 414
    page = body.split(b"\r\n\r\n", 1)[1].decode()
    assert "This link is too long to open" in page and "Attention Lens" in page and 'href="/"' in page


@pytest.mark.slow
@pytest.mark.nginx
@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM}")
def test_a_long_link_opened_in_chromium_behind_nginx_says_the_text_is_too_long(behind_nginx):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(f"{behind_nginx}/?{urlencode({'text': LONG})}", wait_until="commit", timeout=120_000)
            notice = page.locator("[data-testid=stAlert]", has_text="too long")
            notice.wait_for(timeout=120_000)
            assert "100,000 characters" in notice.inner_text()
            page.wait_for_function(ROW_SHOWN, arg=[0], timeout=120_000)  # the page works on the default sentence
            page.wait_for_selector(IDLE, timeout=120_000)
            assert len(page.url) < 2000, "the address still holds the long text"
        finally:
            browser.close()
