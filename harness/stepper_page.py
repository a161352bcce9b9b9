"""Explore's stepper (app/render/stepper: stepper.js, pair.js and their CSS) on a plain page with no server: the
files of a tree or a git revision (`stepper_files`), fed a packed run (`packed_run`: everyday-en-fr's greedy run of
a sentence, packed as Explore packs it), served by Playwright's routing (`stepper_page`); what a step costs the
page (`STEPS`: arrow-key steps, each awaited to the frame after it, with the DOM changes it made) and the paint
and layout work in a Chromium performance trace (`trace_counts`)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("stepper.js", "pair.js", "stepper.css", "pair.css")
SENTENCE = "Where is the train station? I would like to buy two tickets to Paris for tomorrow morning."
ORIGIN = "http://lens.test"


def stepper_files(tree: str) -> dict[str, str]:
    """The stepper's files of a folder (as it is on disk) or of a git revision of this repository."""
    folder = Path(tree)
    if folder.is_dir():
        base = folder / "app" / "render" / "stepper"
        return {name: (base / name).read_text(encoding="utf-8") if (base / name).is_file() else "" for name in FILES}
    out = {}
    for name in FILES:
        got = subprocess.run(["git", "show", f"{tree}:app/render/stepper/{name}"], cwd=ROOT, capture_output=True,
                             text=True)
        if got.returncode and name.startswith("stepper"):
            raise SystemExit(f"no app/render/stepper/{name} at {tree!r}: {got.stderr.strip()}")
        out[name] = got.stdout if not got.returncode else ""
    return out


def packed_run(view: str, kind: str, sentence: str = SENTENCE) -> bytes:
    """everyday-en-fr's greedy run of `sentence`, packed as Explore packs it, opening on step 1 in `view` and
    `kind`."""
    from attention_lens.app.render import stepper
    from attention_lens.model.engine import load_engine

    engine = load_engine(ROOT / "checkpoints" / "everyday-en-fr")
    trace = engine.trace(sentence)
    extra = {"run_id": "frames", "seq": 1, "step": 1, "kind": kind, "view": view, "layer": 0, "head": 0,
             "scale": "fixed", "present": False, "picture": "attention", "caption": "", "sync": False,
             "url_step": False, "head_off": True}
    return stepper.pack(trace, special=engine.special_pieces(), extra=extra)


# A page as Streamlit lays Explore out: the stepper in a scrolling box of its own (not the page itself), with more
# of the page under it.
PAGE = """<!doctype html><html><head><meta charset=utf-8><style>{css}
body {{ margin: 0; font-family: sans-serif; }} #host {{ width: 1150px; margin: 40px 60px; }}
#main {{ position: absolute; inset: 0; overflow: auto; }}</style></head>
<body><div id=main><div id=host></div><div style="height: 600px"></div></div><script type=module>
import mount from '{origin}/stepper.js';
const bytes = new Uint8Array(await (await fetch('{origin}/run.bin')).arrayBuffer());
mount({{ data: bytes, parentElement: document.getElementById('host'), setStateValue: () => {{}},
        setTriggerValue: () => {{}} }});
window.__mounted = true;
</script></body></html>"""


def stepper_page(browser, files: dict[str, str], run: bytes, width: int = 1366, height: int = 900):
    """A new page (sync Playwright) showing the stepper `files` draw `run` (packed), its first step drawn."""
    page = browser.new_page(viewport={"width": width, "height": height})

    def serve(route):
        name = route.request.url[len(ORIGIN) + 1:]
        if name == "run.bin":
            route.fulfill(body=run, content_type="application/octet-stream")
        elif name == "stepper.js":
            route.fulfill(body=files["stepper.js"] + files["pair.js"], content_type="text/javascript")
        else:
            route.fulfill(body=PAGE.format(css=files["stepper.css"] + files["pair.css"], origin=ORIGIN),
                          content_type="text/html")
    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    page.wait_for_function("() => window.__mounted && !!document.querySelector('.lens-stepper canvas')")
    return page


# JS: a key pressed on the page (keydown on the body, as the stepper listens for it)
KEY = """(k) => document.body.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true, cancelable: true}))"""


def step_to(page, step: int) -> None:
    """Step the page's stepper to `step` (1-based) by keys: Home, then the right arrow, until it shows that step."""
    page.evaluate(KEY, "Home")
    for _ in range(step - 1):
        page.evaluate(KEY, "ArrowRight")
    page.wait_for_function("(n) => document.querySelector('.lens-stepper').dataset.step === String(n)", arg=step)


# JS: `n` arrow-key steps from step 1, each awaited to the second animation frame after it (the frame that drew
# it has been produced): ms from the key to then, and the DOM records (MutationObserver) of each step.
STEPS = """async (n) => {
  const s = document.querySelector('[data-testid=lens-stepper]');
  const raf = () => new Promise(r => requestAnimationFrame(r));
  const key = (k) => document.body.dispatchEvent(
    new KeyboardEvent('keydown', {key: k, bubbles: true, cancelable: true}));
  key('Home'); await raf(); await raf();
  const ms = [], records = [];
  let seen = 0;
  const obs = new MutationObserver((r) => { seen += r.length; });
  obs.observe(s, {subtree: true, childList: true, attributes: true, characterData: true});
  for (let i = 0; i < n; i++) {
    seen = 0;
    const t0 = performance.now();
    key('ArrowRight');
    await raf(); await raf();
    ms.push(performance.now() - t0);
    obs.takeRecords().forEach(() => seen++);
    records.push(seen);
  }
  obs.disconnect();
  return {ms, records, step: Number(s.dataset.step)};
}"""


# The renderer main thread's work a frame is made of (a trace's event names): all tasks, the script of the
# events (the keys), style, layout, the paint steps and the commit to the compositor.
MAIN_WORK = ("RunTask", "EventDispatch", "UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit")


def trace_counts(path: Path) -> dict:
    """A Chromium trace's Paint events (and the elements most painted), its Layout events and the layout objects
    each laid out, and the renderer main thread's CPU ms by kind of work (MAIN_WORK; nested kinds counted in their
    task's too)."""
    data = json.loads(Path(path).read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    paints = layouts = objects = 0
    nodes: dict[str, int] = {}
    each: list[int] = []
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    main: dict[str, float] = {}  # the renderer's main thread: CPU ms by kind of work
    for e in events:
        if e.get("ph") == "X" and e["name"] in MAIN_WORK and names.get((e["pid"], e["tid"])) == "CrRendererMain":
            main[e["name"]] = main.get(e["name"], 0.0) + e.get("tdur", e.get("dur", 0)) / 1000
    for e in events:
        if e.get("ph") not in ("X", "B"):
            continue
        if e["name"] == "Paint":
            paints += 1
            name = (e.get("args") or {}).get("data", {}).get("nodeName", "?")[:40]
            nodes[name] = nodes.get(name, 0) + 1
        elif e["name"] == "Layout":
            layouts += 1
            begin = (e.get("args") or {}).get("beginData") or {}
            objects += int(begin.get("dirtyObjects", 0))
            each.append(int(begin.get("dirtyObjects", 0)))
    return {"paint": paints, "layout": layouts, "layout_objects": objects, "each": each,
            "painted": sorted(nodes.items(), key=lambda x: -x[1])[:4], "main_ms": main}


TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline"]


def traced_steps(browser, page, steps: int) -> tuple[dict, dict]:
    """`steps` arrow-key steps (STEPS) run under a Chromium trace: what STEPS returns, and trace_counts of the
    trace."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        browser.start_tracing(page=page, path=str(path), categories=TRACE_CATEGORIES)
        got = page.evaluate(STEPS, steps)
        browser.stop_tracing()
        return got, trace_counts(path)
