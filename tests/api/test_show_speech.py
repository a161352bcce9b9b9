"""The notebook view of a speech model's run, drawn as the app draws it: the clip's log-mel spectrogram and its times
under the source axis, the padding as one band, two players (the whole clip, the stretch the step attends to).
In Chromium at 1366 x 768, from the saved file with the network cut off: the strip lies under the matrix, ticked in
seconds, and the players play."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import numpy as np
import pytest
from attention_lens.app.render.spectrogram import for_browser, mel_bytes, stretch

import attention_lens
from tests.api.test_show import view_data
from tests.fixtures.audio_trace import audio_trace, tone

ROOT = Path(__file__).resolve().parents[2]
SPOKEN = ROOT / "checkpoints" / "spoken-grammar"
CLIP = ROOT / "assets" / "speech" / "test" / "clips" / "test-000000.flac"


def test_a_clips_view_carries_its_spectrogram_times_and_padding_band():
    trace = audio_trace(seconds=3.2)
    data = view_data(attention_lens.show(trace, kind="cross").html)
    a = data["audio"]
    assert a["times"] == trace.source["times"] and len(a["times"]) == len(data["source"]) == 161
    assert a["padding"] == {"index": 160, "start_s": 3.2, "end_s": 30.0}
    assert data["source"][160] == "padding 3.20–30.00 s"  # one band, not 1,340 columns of padding
    codes, lo, hi = mel_bytes(trace.source["mel"])
    assert base64.b64decode(a["mel"]["codes"]) == codes
    assert (a["mel"]["bins"], a["mel"]["frames"], a["mel"]["lo"], a["mel"]["hi"]) == (80, 320, lo, hi)
    assert a["samples"] is None  # no clip given: the players are there, switched off, saying how to switch them on
    html = attention_lens.show(trace).html
    assert 'class="al-play-clip" disabled' in html and "show(trace, audio=CLIP)" in html


def test_a_pooled_clips_view_keeps_the_pooled_times_and_band():
    trace = audio_trace(seconds=10.0, words=("a",) * 30)
    a = view_data(attention_lens.show(trace).html)["audio"]
    sent = for_browser(trace).source
    assert a["frame_s"] == pytest.approx(0.06) and len(a["times"]) == 168
    assert a["times"] == [round(t, 4) for t in sent["times"]] and a["padding"]["index"] == 167


def test_the_clip_given_goes_with_the_view_for_its_players():
    trace = audio_trace(seconds=1.0)
    samples = tone(1.0, rate=22_050)
    view = attention_lens.show(trace, audio=(samples, 22_050))
    a = view_data(view.html)["audio"]
    pcm = np.frombuffer(base64.b64decode(a["samples"]["pcm"]), "<i2")
    assert a["samples"]["rate"] == 16_000 and len(pcm) == 16_000  # resampled to 16 kHz as the model read it
    assert 'class="al-play-clip">▶ Whole clip' in view.html and "al-play-stretch" in view.html


def test_a_text_run_has_no_strip_and_no_players(tiny_ckpt):
    trace = attention_lens.load(tiny_ckpt, device="cpu").trace("the black cat sat on the mat .", max_len=4)
    html = attention_lens.show(trace).html
    assert "audio" not in view_data(html)
    assert 'class="al-play-clip' not in html and 'class="al-bar al-audio"' not in html
    with pytest.raises(ValueError, match="speech model"):
        attention_lens.show(trace, audio=(tone(), 16_000))


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no Chromium")
@pytest.mark.skipif(not (SPOKEN / "config.json").exists() or not CLIP.exists(), reason="no shipped speech model")
def test_the_saved_view_of_a_spoken_clip_draws_its_strip_and_plays_in_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    # layer 2, head 2: one of the model's alignment heads (its generation_config), a head that follows the sound
    trace = attention_lens.load(SPOKEN, device="cpu").trace(audio=str(CLIP))
    page_path = attention_lens.show(trace, kind="cross", layer=2, head=2, step=5, audio=str(CLIP)).save(
        tmp_path / "speech.html")
    shot = Path(os.environ.get("AL_VIEW_SHOT", tmp_path / "speech-view.png"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required"])
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        errors, requests = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", lambda route: (requests.append(route.request.url), route.continue_()
                                          if route.request.url.startswith("file:") else route.abort()))
        page.goto(page_path.as_uri())
        page.wait_for_selector(".al-view[data-ready='1']", timeout=15000)
        view = page.locator(".al-view")
        strip = page.evaluate("JSON.parse(document.querySelector('.al-view').dataset.strip)")
        ticks = view.get_attribute("data-ticks").split("|")
        # the strip's pixels: the spectrogram's greys, under the matrix's last row
        greys = page.evaluate("""(s) => {
            const c = document.querySelector('canvas.al-canvas'), r = window.devicePixelRatio || 1;
            const d = c.getContext('2d').getImageData(Math.round((s.left + 4) * r), Math.round((s.top + 4) * r),
                                                     Math.round(100 * r), Math.round((s.height - 8) * r)).data;
            const seen = new Set(); let dark = 0;
            for (let i = 0; i < d.length; i += 4) {
              seen.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]);
              if (d[i] < 230 && Math.abs(d[i] - d[i + 2]) < 40) dark++;  // grey to black, not the weights' blue
            }
            return [seen.size, dark / (d.length / 4)]; }""", strip)
        said = page.locator(".al-stretch-text").inner_text()
        stretch_range = view.get_attribute("data-stretch")
        page.screenshot(path=str(shot), full_page=True)
        page.click(".al-play-stretch")
        page.wait_for_function("() => !!document.querySelector('.al-view').dataset.played")
        played_stretch = view.get_attribute("data-played")
        page.click(".al-play-clip")
        page.wait_for_function("() => document.querySelector('.al-view').dataset.played.startsWith('0.00-')")
        played_clip = view.get_attribute("data-played")
        page.select_option(".al-kind", "encoder_self_attention")
        enc_ticks = view.get_attribute("data-ticks")
        browser.close()
    assert errors == [] and all(u.startswith("file:") for u in requests)
    assert strip["top"] > strip["bottom"] and strip["height"] == 64
    assert greys[0] > 20 and greys[1] > 0.2, greys  # a spectrogram: many greys, much of it not white
    duration = trace.source["duration_s"]
    assert ticks[0] == "0.0 s" and len(ticks) >= 3 and all(t.endswith(" s") for t in ticks)
    assert float(ticks[-1].split()[0]) <= duration
    # the stretch named on screen is the app's (spectrogram.stretch over the head on screen, the step's row)
    sent = for_browser(trace)
    clip_columns = sent.source["padding"]["index"]
    start, end = stretch(sent.cross_attention[1, 1, 4], sent.source["times"], sent.source["frame_s"], clip_columns)
    assert stretch_range == f"{start:.2f}-{end:.2f}" and played_stretch == stretch_range
    assert f"attends most to {start:.2f}–{end:.2f} s (layer 2 · head 2)" in said
    assert played_clip == f"0.00-{duration:.2f}"
    assert enc_ticks.startswith("0.0 s|")
