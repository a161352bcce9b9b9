"""K replicas of the app behind nginx, in the foreground: `./run.sh serve --replicas K [--port 8501]`.

Starts K `streamlit run app/streamlit_app.py` processes on 127.0.0.1 (free ports), waits until each is healthy,
renders deploy/nginx.conf.template into a temporary folder and runs Debian's nginx on `--address:--port` in
front of them (sticky sessions by cookie: see the template). Ctrl-C or SIGTERM stops nginx and every replica.
Options after `--` go to every `streamlit run`. A replica that dies is reported; nginx sends its visitors to
the others. If serve.py itself is killed, Linux stops nginx and the replicas too. It prints one line per
replica (`replica N 127.0.0.1:PORT pid PID`), then `serving on URL`.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.template"
NGINX_CANDIDATES = ("nginx", "/usr/sbin/nginx")


def find_nginx() -> str | None:
    for name in NGINX_CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def die_with_parent() -> None:
    """In a child, before exec: Linux sends it SIGTERM when serve.py dies, even by SIGKILL (prctl PDEATHSIG)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def render(listen: str, servers: list[str], temp: str) -> str:
    lines = "\n        ".join(f"server {s};" for s in servers)
    return (TEMPLATE.read_text(encoding="utf-8")
            .replace("@@LISTEN@@", listen).replace("@@SERVERS@@", lines).replace("@@TEMP@@", temp))


def replica_cmd(port: int, extra: list[str]) -> list[str]:
    # attention_lens.launch: `streamlit` that reads request heads as long as a browser's longest address
    return [sys.executable, "-m", "attention_lens.launch", "run", str(ROOT / "app" / "streamlit_app.py"),
            "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def wait_all(urls: list[str], procs: list[subprocess.Popen], seconds: float = 120) -> None:
    pending = set(range(len(urls)))
    deadline = time.monotonic() + seconds
    while pending and time.monotonic() < deadline:
        for i in sorted(pending):
            if procs[i].poll() is not None:
                raise RuntimeError(f"replica {i + 1} exited with code {procs[i].returncode}")
            if healthy(urls[i]):
                pending.discard(i)
        time.sleep(0.3)
    if pending:
        raise RuntimeError(f"replicas {sorted(i + 1 for i in pending)} not healthy within {seconds:.0f} s")


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 15
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Stop(Exception):
    """Ctrl-C or SIGTERM: stop everything."""


def on_signal(_signum, _frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Stop


def serve(replicas: int, address: str, port: int, extra: list[str]) -> int:
    nginx = find_nginx()
    if nginx is None:
        print("serve: nginx not found; install it (Debian: apt-get install -y nginx)", file=sys.stderr)
        return 2
    temp = tempfile.mkdtemp(prefix="lens-nginx-")
    os.chmod(temp, 0o711)  # nginx's workers (nobody, when started as root) reach their temp folders in it
    procs: list[subprocess.Popen] = []
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        ports = [free_port() for _ in range(replicas)]
        procs = [subprocess.Popen(replica_cmd(p, extra), cwd=ROOT, stdin=subprocess.DEVNULL,
                                  preexec_fn=die_with_parent) for p in ports]
        wait_all([f"http://127.0.0.1:{p}" for p in ports], procs)
        for i, (p, proc) in enumerate(zip(ports, procs), 1):
            print(f"replica {i} 127.0.0.1:{p} pid {proc.pid}", flush=True)
        conf = Path(temp) / "nginx.conf"
        conf.write_text(render(f"{address}:{port}", [f"127.0.0.1:{p}" for p in ports], temp), encoding="utf-8")
        front = subprocess.Popen([nginx, "-p", temp, "-c", str(conf), "-e", "stderr", "-g", "daemon off;"],
                                 stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        procs.append(front)
        shown = "127.0.0.1" if address in ("0.0.0.0", "") else address
        deadline = time.monotonic() + 30
        while not healthy(f"http://{shown}:{port}"):
            if front.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nginx did not start (see its messages above)")
            time.sleep(0.2)
        print(f"serving on http://{shown}:{port} ({replicas} replicas behind nginx; Ctrl-C stops all)", flush=True)
        dead: set[int] = set()
        while front.poll() is None:
            for i, proc in enumerate(procs[:-1], 1):
                if i not in dead and proc.poll() is not None:
                    dead.add(i)
                    print(f"replica {i} exited (code {proc.returncode}); nginx serves its visitors elsewhere",
                          file=sys.stderr, flush=True)
            time.sleep(0.5)
        print(f"serve: nginx exited (code {front.returncode})", file=sys.stderr)
        return 1
    except Stop:
        return 0
    except RuntimeError as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 1
    finally:
        stop(procs[::-1])  # nginx first, then the replicas
        shutil.rmtree(temp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="For a class larger than one app server holds: run K replicas of the app behind nginx, one per\n"
                    "core, in the foreground. A visitor stays on one replica (a cookie), and if a replica dies its\n"
                    "visitors move to the others. Ctrl-C stops nginx and every replica. ./run.sh serve installs\n"
                    "Debian's nginx first when it can. Guide: docs/operating.md.",
        epilog="""examples (./run.sh serve and attention-lens serve take the same options):
  ./run.sh serve --replicas 4                      nginx on 0.0.0.0:8501, four replicas on 127.0.0.1
  ./run.sh serve --replicas 4 --port 8080 -- --server.maxUploadSize 50     after --: options for every replica""")
    parser.add_argument("--replicas", type=int, default=2, help="how many app replicas (default: 2)")
    parser.add_argument("--address", default="0.0.0.0", help="where nginx listens (default: every interface)")
    parser.add_argument("--port", type=int, default=8501, help="nginx's port (default: 8501)")
    parser.add_argument("streamlit_args", nargs="*", help="after --: options for every `streamlit run`")
    args = parser.parse_args()
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    sys.exit(serve(args.replicas, args.address, args.port, args.streamlit_args))


if __name__ == "__main__":
    main()
