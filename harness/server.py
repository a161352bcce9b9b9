"""The one way tests and benchmarks start the app: `streamlit run app/streamlit_app.py` on a free loopback port,
returned once /_stcore/health answers, stopped after (`served`, a with-block; `serve` / `stop` where the server
outlives a block); and its replicas behind nginx as `./run.sh serve` starts them (`served_replicas`). `app_env`
is the environment a server gets: this one without its LENS_ settings, so it sees the shipped models only, plus
what a test names."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# What pytest sets in the environment for the test running now: a server's environment leaves it out, so that
# servers asked for by two tests with the same settings are one server.
PER_TEST = ("PYTEST_CURRENT_TEST",)


def app_env(model: str | Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment without its LENS_ settings, so a server sees only the shipped models; with
    `model`, that folder is the one model it lists and opens. `extra` adds variables (e.g. LENS_HF_MODELS)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_") and k not in PER_TEST}
    if model is not None:
        path = str(Path(model).resolve())
        env.update(LENS_MODEL_DIRS=path, LENS_DEFAULT_MODEL=path)
    env.update(extra)
    return env


def serve(env: Mapping[str, str], port: int, tree: Path = ROOT, extra: Sequence[str] = (),
          seconds: float = 240) -> subprocess.Popen:
    """`streamlit run` of `tree`'s app on 127.0.0.1:port (headless, no file watcher), returned once healthy:
    started as the tree's own commands start it (attention_lens.launch, where the tree has it)."""
    launcher = "attention_lens.launch" if (Path(tree) / "attention_lens" / "launch.py").is_file() else "streamlit"
    cmd = [sys.executable, "-m", launcher, "run", str(Path(tree) / "app" / "streamlit_app.py"),
           "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra]
    proc = subprocess.Popen(cmd, cwd=tree, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, seconds)
    except BaseException:
        stop(proc)
        raise
    return proc


def wait_healthy(url: str, proc: subprocess.Popen | None = None, seconds: float = 90) -> None:
    """Wait until `url`'s /_stcore/health answers 200; raise if `proc` exits first or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not become healthy within {seconds:.0f} s")


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """Terminate a server and wait for it; kill it if it does not exit within `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def served(env: Mapping[str, str], tree: Path = ROOT, extra: Sequence[str] = (),
           seconds: float = 240) -> Iterator[tuple[str, subprocess.Popen]]:
    """A healthy server on a free port for the `with` block: yields (its URL, its process), stops it after."""
    port = free_port()
    proc = serve(env, port, tree, extra, seconds)
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        stop(proc)


REPLICA_LINE = re.compile(r"replica (\d+) (127\.0\.0\.1:\d+) pid (\d+)")


@contextlib.contextmanager
def served_replicas(replicas: int, env: Mapping[str, str], extra: Sequence[str] = (),
            seconds: float = 240) -> Iterator[tuple[str, dict[str, int], subprocess.Popen]]:
    """deploy/serve.py (what `./run.sh serve --replicas K` runs: K replicas behind nginx, sticky sessions) on a
    free port of 127.0.0.1, `extra` passed to every `streamlit run`; yields (its URL, each replica's address ->
    pid, the serve.py process). Stopped after (SIGTERM: nginx, then every replica), unless already stopped."""
    port = free_port()
    cmd = [sys.executable, str(ROOT / "deploy" / "serve.py"), "--replicas", str(replicas), "--address", "127.0.0.1",
           "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--", *extra] if extra else cmd, cwd=ROOT, env=dict(env),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        pids: dict[str, int] = {}
        deadline = time.monotonic() + seconds
        for line in proc.stdout:
            if m := REPLICA_LINE.match(line):
                pids[m[2]] = int(m[3])
            if line.startswith("serving on") or time.monotonic() > deadline:
                break
        if len(pids) != replicas or proc.poll() is not None:
            raise RuntimeError(f"deploy/serve.py did not come up: {len(pids)} of {replicas} replicas")
        threading.Thread(target=proc.stdout.read, daemon=True).start()  # the replicas' banners must not fill the pipe
        yield f"http://127.0.0.1:{port}", pids, proc
    finally:
        stop(proc, timeout=60)
