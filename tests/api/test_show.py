"""attention_lens.show: a self-contained HTML view of a Trace (no network), carrying what the app's slicing gives
at every step; in Chromium, from a file with the network cut off, it draws and its controls step."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from attention_lens.app.render.views import at_step

import attention_lens

SOURCE = "the black cat sat on the mat ."
TARGET = "le chat noir s' assit sur le tapis ."


@pytest.fixture(scope="module")
def traces(tiny_ckpt):
    model = attention_lens.load(tiny_ckpt, device="cpu")
    return {"decoded": model.trace(SOURCE, max_len=6),
            "forced": model.trace(SOURCE, target=TARGET, contributions=True)}


def view_data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" class="al-data">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))


def test_the_view_is_self_contained(traces):
    html = attention_lens.show(traces["decoded"])._repr_html_()
    assert not re.search(r"<script[^>]+src=|<link|https?://|//cdn", html)
    assert "<canvas" in html and "getContext" in html


def test_the_view_carries_every_kind_and_the_apps_mask(traces):
    trace = traces["forced"]
    data = view_data(attention_lens.show(trace, kind="dec", reading="rollout").html)
    assert (data["kind"], data["view"], data["reading"], data["step"]) == (
        "decoder_self_attention", "grid", "rollout", trace.m)
    for kind in ("cross_attention", "decoder_self_attention", "encoder_self_attention"):
        np.testing.assert_allclose(data["readings"]["weights"][kind], getattr(trace, kind), atol=5e-5)
        np.testing.assert_allclose(data["readings"]["rollout"][kind], trace.contributions["rollout"][kind], atol=5e-5)
    assert data["teacher"] and data["mask"] == at_step(trace, "decoder_self_attention", trace.m).mask.tolist()
    assert not view_data(attention_lens.show(traces["decoded"]).html)["teacher"]


def test_layer_and_head_are_one_based_and_open_one_head(traces):
    data = view_data(attention_lens.show(traces["decoded"], kind="enc", layer=2, head=1, step=1).html)
    assert (data["kind"], data["view"], data["layer"], data["head"], data["step"]) == (
        "encoder_self_attention", "head", 1, 0, 1)


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "self"}, "kind must be one of"), ({"layer": 9}, "layer must be in"),
    ({"step": 99}, "step must be in"), ({"view": "table"}, "view must be one of"),
    ({"reading": "rollout"}, "contributions=True"),
])
def test_bad_choices_are_one_clear_error(traces, kwargs, message):
    with pytest.raises(ValueError, match=message):
        attention_lens.show(traces["decoded"], **kwargs)


def test_save_writes_a_page(traces, tmp_path):
    page = attention_lens.show(traces["decoded"]).save(tmp_path / "v.html")
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and 'class="al-view"' in text


@pytest.mark.browser
@pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(), reason="no Chromium")
def test_the_saved_view_draws_and_steps_offline_in_chromium(traces, tmp_path):
    from playwright.sync_api import sync_playwright

    trace = traces["forced"]
    page_path = attention_lens.show(trace, kind="cross", step=2).save(tmp_path / "v.html")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        requests, errors = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", lambda route: (requests.append(route.request.url), route.continue_()
                                          if route.request.url.startswith("file:") else route.abort()))
        page.goto(page_path.as_uri())
        page.wait_for_selector(".al-view[data-ready='1']", timeout=15000)
        count = page.locator(".al-count")
        assert count.inner_text() == f"step 2 / {trace.m}"
        page.click(".al-next")
        assert count.inner_text() == f"step 3 / {trace.m}"
        page.focus(".al-view")
        page.keyboard.press("End")
        assert count.inner_text() == f"step {trace.m} / {trace.m}"
        page.select_option(".al-kind", "decoder_self_attention")
        page.select_option(".al-mode", "head")
        assert page.locator(".al-head").is_visible()
        size = page.evaluate("(() => { const c = document.querySelector('canvas.al-canvas');"
                             " return [c.width, c.height]; })()")
        painted = page.evaluate("""(() => { const c = document.querySelector('canvas.al-canvas');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
            for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0) n++; return n; })()""")
        browser.close()
    assert errors == [] and all(u.startswith("file:") for u in requests)
    assert size[0] > 100 and size[1] > 100 and painted > 1000


# How JupyterLab shows a trusted text/html output: the markup set on a detached element, each script re-created so
# that it runs, then the element attached to the page.
JUPYTERLAB_RENDER = """(html) => {
  const host = document.createElement('div');
  host.innerHTML = html;
  for (const old of Array.from(host.getElementsByTagName('script'))) {
    const script = document.createElement('script');
    for (const a of old.attributes) script.setAttribute(a.name, a.value);
    script.textContent = old.textContent;
    old.parentNode.replaceChild(script, old);
  }
  document.body.appendChild(host);
}"""


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no Chromium")
def test_the_notebook_markup_draws_when_injected_as_jupyterlab_does(traces):
    from playwright.sync_api import sync_playwright

    trace = traces["decoded"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_content("<html><body></body></html>")
        for _ in range(2):  # two outputs on one page: each view drives its own controls
            page.evaluate(JUPYTERLAB_RENDER, attention_lens.show(trace, step=1)._repr_html_())
        page.wait_for_function("document.querySelectorAll(\".al-view[data-ready='1']\").length === 2", timeout=15000)
        page.locator(".al-next").nth(1).click()
        counts = page.locator(".al-count").all_inner_texts()
        browser.close()
    assert errors == [] and counts == [f"step 1 / {trace.m}", f"step 2 / {trace.m}"]
