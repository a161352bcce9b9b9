"""Scale-out: two replicas behind nginx on 127.0.0.1, started by deploy/serve.py (what `./run.sh serve` runs), and
driven by the protocol-level client of harness/explore_session.py. Visitors spread over both replicas; each
keeps its session (its step) across clicks, page loads and websocket reconnects; killing one replica leaves the
other's sessions working and sends new visitors to it; SIGTERM stops nginx and every replica. The tests run in
order on one cluster (the last two of them take a replica, then everything, down)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
import urllib.request

import pytest

from deploy import serve
from harness.explore_session import TEXT, click_next, explore_view, open_explore
from harness.server import ROOT, app_env, served_replicas
from harness.st_client import Session

NO_NGINX = ("nginx is not installed and could not be: .ci/run and ./run.sh serve install Debian's nginx when run "
            "as root (apt-get install -y nginx)")


def needs_nginx(test):
    for mark in (pytest.mark.slow, pytest.mark.nginx, pytest.mark.skipif(serve.find_nginx() is None, reason=NO_NGINX)):
        test = mark(test)
    return test

@pytest.fixture(scope="module")
def cluster():
    with served_replicas(2, app_env()) as (url, replicas, proc):  # stopped by SIGTERM after, if a test has not
        yield {"url": url, "replicas": replicas, "proc": proc}


def with_pid_gone(pid: int, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


async def sessions_on_both(url: str, wanted: int = 2, tries: int = 16) -> dict[str, Session]:
    """New visitors until both replicas hold one (each visitor's replica is decided by its fresh random cookie)."""
    found: dict[str, Session] = {}
    for _ in range(tries):
        s = await open_explore(url, TEXT)
        if s.replica in found or s.replica is None:
            await s.close()
        else:
            found[s.replica] = s
        if len(found) == wanted:
            break
    return found


def page_replica(url: str, cookies: dict[str, str]) -> str:
    req = urllib.request.Request(url + "/", headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.headers["X-Lens-Replica"]


def answered(header: str | None) -> str | None:
    """The replica that answered: nginx lists every one it tried ("dead:port, live:port")."""
    return header.split(", ")[-1] if header else None


async def step_and_check(s, expect_step: int) -> None:
    latency, why = await click_next(s)
    assert why is None, why
    assert explore_view(s.page).step == expect_step


@needs_nginx
def test_visitors_spread_over_replicas_and_keep_their_sessions(cluster):
    async def scenario():
        found = await sessions_on_both(cluster["url"])
        try:
            assert set(found) == set(cluster["replicas"]), f"visitors reached {set(found)} only"
            for replica, s in found.items():
                assert "lens_sticky" in s.cookies
                assert s.headers["x-lens-replica"] == replica  # the page and its stream reached the same replica
                for step in range(2, 8):
                    await step_and_check(s, step)
                    assert page_replica(cluster["url"], s.cookies) == replica
                    sid = s.session_id
                    run = await s.reconnect()  # a resumed session redraws at its own step
                    assert not run.problems and s.session_id == sid and s.replica == replica
                    assert explore_view(s.page).step == step
        finally:
            for s in found.values():
                await s.close()

    asyncio.run(scenario())


@needs_nginx
def test_the_proxy_compresses_the_front_end(cluster):
    """Every new visitor fetches Streamlit's scripts; the replicas send them uncompressed, nginx gzips them."""
    import gzip

    from attention_lens.app.render.preload import JS_DIR, chunk

    name = chunk("PlotlyChart")
    raw = (JS_DIR / name).read_bytes()
    req = urllib.request.Request(cluster["url"] + f"/static/js/{name}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.headers["Content-Encoding"] == "gzip"
        body = r.read()
    assert gzip.decompress(body) == raw and len(body) < 0.4 * len(raw)
    with urllib.request.urlopen(cluster["url"] + f"/static/js/{name}", timeout=30) as r:  # a client without gzip
        assert r.headers.get("Content-Encoding") is None and r.read() == raw


@needs_nginx
def test_the_proxy_keeps_the_front_end_and_serves_it_itself(cluster):
    """Streamlit's scripts are the same on every replica: after the first fetch nginx answers from its cache."""
    from attention_lens.app.render.preload import ECHARTS, JS_DIR, chunk

    name = chunk(ECHARTS)
    seen = []
    for _ in range(3):
        with urllib.request.urlopen(cluster["url"] + f"/static/js/{name}", timeout=30) as r:
            assert r.read() == (JS_DIR / name).read_bytes()
            seen.append(r.headers["X-Lens-Cache"])
    assert seen[0] in ("MISS", "HIT") and seen[1:] == ["HIT", "HIT"]
    with urllib.request.urlopen(cluster["url"] + "/", timeout=30) as r:  # the page itself is never cached
        assert r.headers.get("X-Lens-Cache") is None


@needs_nginx
def test_one_replica_down_leaves_the_other_working(cluster):
    async def scenario():
        found = await sessions_on_both(cluster["url"])
        victim, survivor = sorted(found)
        try:
            for s in found.values():
                await step_and_check(s, 2)
            os.kill(cluster["replicas"][victim], signal.SIGKILL)
            assert with_pid_gone(cluster["replicas"][victim])
            kept = found[survivor]
            for step in range(3, 7):  # the survivor's session goes on where it was
                await step_and_check(kept, step)
            lost = found[victim]  # its session died with its replica: the reconnect lands on the survivor, anew,
            run = await lost.reconnect()  # and, as a browser does, sends the page's address: the app reads its
            assert not run.problems and answered(lost.replica) == survivor  # link and opens at the same step
            assert explore_view(lost.page).step == 2
            await step_and_check(lost, 3)
            fresh = await open_explore(cluster["url"], TEXT)  # a new visitor too
            assert answered(fresh.replica) == survivor
            await step_and_check(fresh, 2)
            await fresh.close()
        finally:
            for s in found.values():
                await s.close()

    asyncio.run(scenario())
    assert cluster["proc"].poll() is None  # serve.py goes on with one replica


@needs_nginx
def test_sigterm_stops_nginx_and_every_replica(cluster):
    proc = cluster["proc"]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    assert all(with_pid_gone(pid) for pid in cluster["replicas"].values())
    with pytest.raises(OSError):
        urllib.request.urlopen(cluster["url"] + "/_stcore/health", timeout=5)


def test_compose_fills_the_same_placeholders_as_serve(tmp_path):
    """deploy/compose.yaml renders the template with sed; a placeholder it misses would reach nginx verbatim."""
    template = (ROOT / "deploy" / "nginx.conf.template").read_text(encoding="utf-8")
    placeholders = set(re.findall(r"@@[A-Z]+@@", template))
    assert placeholders == {"@@LISTEN@@", "@@SERVERS@@", "@@TEMP@@"}
    assert "@@" not in serve.render("127.0.0.1:1", ["127.0.0.1:2"], str(tmp_path))
    compose = (ROOT / "deploy" / "compose.yaml").read_text(encoding="utf-8")
    assert all(f"s|{p}|" in compose for p in placeholders)


def test_every_server_runs_without_the_collection_after_each_script_run():
    """Streamlit's full collection after every run cost ~25% of a click's server CPU even with the imports frozen
    (app/streamlit_app.py, benchmarks/RESULTS.md part 8): the config every launcher reads switches it off, and
    the container image carries that config."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False
    assert "COPY .streamlit/ .streamlit/" in (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert "cwd=ROOT" in (ROOT / "deploy" / "serve.py").read_text(encoding="utf-8")  # where streamlit reads it
