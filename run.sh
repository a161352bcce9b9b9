#!/usr/bin/env bash
# One entry point that does all set-up on a fresh machine, then does what you ask:
#   ./run.sh app    start the app; it opens on the shipped everyday-en-fr model (http://localhost:8501)
#   ./run.sh test   ruff, then the whole test suite on every core (installs Chromium for the browser tests if it can)
#   ./run.sh test --fast   ruff, then every test but the browser, slow, nginx, benchmark and AppTest ones
#   ./run.sh serve --replicas K   K app replicas behind nginx with sticky sessions (installs nginx if it can)
set -euo pipefail
cd "$(dirname "$0")"
VENV=.venv

setup() {
    if [ ! -x "$VENV/bin/python" ]; then
        python3 -m venv "$VENV"
    fi
    if [ ! -f "$VENV/.installed" ] || [ requirements.txt -nt "$VENV/.installed" ] || [ requirements-dev.txt -nt "$VENV/.installed" ]; then
        "$VENV/bin/pip" install --quiet --upgrade pip
        "$VENV/bin/pip" install --quiet -r requirements-dev.txt
        touch "$VENV/.installed"
    fi
}

chromium() {
    if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        (apt-get install -y -qq chromium >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1)) \
            || echo "note: could not install chromium; browser tests and PNG/SVG export will be skipped" >&2
    fi
}

espeak_ng() {
    if [ -z "$(ldconfig -p 2>/dev/null | grep libespeak-ng || true)" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        (apt-get install -y -qq espeak-ng >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq espeak-ng >/dev/null 2>&1)) \
            || echo "note: could not install espeak-ng; the speech corpus tests will be skipped" >&2
    fi
}

need_nginx() {
    if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        (apt-get install -y -qq nginx >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq nginx >/dev/null 2>&1)) \
            || echo "note: could not install nginx" >&2
    fi
}

case "${1:-}" in
    app)
        setup
        shift
        exec "$VENV/bin/python" -m attention_lens.launch run app/streamlit_app.py --server.headless true "$@"
        ;;
    test)
        setup
        shift
        # pytest-xdist: one worker a core, idle workers taking over queued tests from busy ones (--dist worksteal: a
        # long test at the end of a queue no longer holds the run); -n 0 after the command runs in one process. The
        # fast loop leaves out what needs a browser, nginx, a server per test or many seconds (markers: pyproject.toml).
        if [ "${1:-}" = --fast ]; then
            shift
            "$VENV/bin/ruff" check .
            exec "$VENV/bin/python" -m pytest -n auto --dist worksteal -m "not (browser or slow or nginx or benchmark or apptest)" "$@"
        fi
        chromium
        espeak_ng
        "$VENV/bin/ruff" check .
        exec "$VENV/bin/python" -m pytest -n auto --dist worksteal "$@"
        ;;
    serve)
        setup
        need_nginx
        shift
        exec "$VENV/bin/python" deploy/serve.py "$@"
        ;;
    *)
        echo "usage: ./run.sh app | test [--fast] [pytest options] | serve [--replicas K] [--port P] [-- streamlit options]" >&2
        exit 2
        ;;
esac
