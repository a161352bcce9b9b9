"""Explore on a speech model in Chromium (a tiny random Whisper, two clips offered as examples): a shipped clip's run
drawn over its spectrogram and stepped in the browser, the stretch a step attends to played there; an upload heard
and a bad upload said in one line; a link carrying language and task."""

from __future__ import annotations

import pytest

from harness.browser import IDLE, launch
from harness.models.whisper import clip
from harness.server import app_env
from tests.fixtures.speech_app import BAD_UPLOADS, CLIPS, speech_setup, wav

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STEPPER = "[data-testid=lens-stepper]"
STRIP = f"{STEPPER} .lens-mel"


@pytest.fixture(scope="module")
def speech_url(app_server, tmp_path_factory) -> str:
    return app_server(app_env(**speech_setup(tmp_path_factory.mktemp("speech")), LENS_WARMUP="0"))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(120_000)  # a rerun on a Whisper model, on a machine shared with other work
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    page.close()
    assert not errors, errors


def _stepper(page) -> dict:
    return page.evaluate("""() => { const s = document.querySelector('[data-testid=lens-stepper]');
        return {step: s.dataset.step, m: s.dataset.m, stretch: s.dataset.stretch, played: s.dataset.played || '',
                said: s.querySelector('.lens-stretch-text').textContent,
                ticks: [...s.querySelectorAll('.lens-klabels .lens-k:not(.thin)')].map(e => e.textContent)}; }""")


def _choose_clip(page, title: str) -> None:
    """Choose a clip in the picker. The first click outside the stepper reports its step to the server (a rerun
    that closes the list it opened), so the box is opened again once that run is over."""
    box, option = page.locator(".st-key-clip input[role=combobox]"), page.get_by_role("option", name=title, exact=True)
    box.click()
    page.wait_for_selector(IDLE)
    if not option.is_visible():
        box.click()
    option.click()
    page.wait_for_selector(IDLE)


def test_a_shipped_clip_is_drawn_over_its_spectrogram_and_steps_in_the_browser(speech_url, page):
    page.goto(speech_url + "/?view=head&kind=cross")
    page.wait_for_selector(STRIP, timeout=300_000)
    page.wait_for_selector(IDLE)
    first = _stepper(page)
    assert first["ticks"][0] == "0.0 s" and first["ticks"][-1] == "padding"  # times, and the padding's one column
    page.locator(f"{STEPPER} .lens-last").click()
    last = _stepper(page)
    assert last["step"] == last["m"] and last["said"].startswith(f"Step {last['m']} ")
    assert last["stretch"], "the last step attends to some stretch of the clip"
    page.locator(f"{STEPPER} .lens-play-stretch").click()
    page.wait_for_function("() => !!document.querySelector('[data-testid=lens-stepper]').dataset.played")
    assert _stepper(page)["played"] == last["stretch"]
    # another shipped clip: a new run over its own spectrogram
    _choose_clip(page, CLIPS["tones-b"][1])
    page.wait_for_function("""() => { const s = document.querySelector('[data-testid=lens-stepper]');
        return s && s.dataset.step === '1'; }""")
    ticks = _stepper(page)["ticks"]
    assert "2.0 s" in ticks or "2 s" in ticks  # a 2.4 s clip
    assert "clip=tones-b" in page.url


def test_an_upload_is_heard_and_a_bad_one_is_one_line(speech_url, page, tmp_path):
    page.goto(speech_url + "/")
    page.wait_for_selector(STRIP, timeout=300_000)
    _choose_clip(page, "your own clip (upload)")
    good = tmp_path / "mine.wav"
    good.write_bytes(wav(clip(1.2, rate=22_050), 22_050))
    page.locator(".st-key-clip_upload input[type=file]").set_input_files(str(good))
    page.wait_for_function("() => document.body.innerText.includes('mine.wav: 1.20 s')", timeout=300_000)
    page.wait_for_selector(STRIP)
    name, data, said = BAD_UPLOADS["not audio"]
    bad = tmp_path / name
    bad.write_bytes(data)
    page.locator(".st-key-clip_upload input[type=file]").set_input_files(str(bad))
    page.wait_for_selector("[data-testid=stAlertContentError]", timeout=60_000)
    page.wait_for_selector(IDLE)
    errors = page.locator("[data-testid=stAlertContentError]")
    assert errors.count() == 1 and said in errors.inner_text() and name in errors.inner_text()
    assert page.locator(STEPPER).count() == 0  # no run of a clip that is not there; the page waits for another
    _choose_clip(page, CLIPS["tones-a"][1])
    page.wait_for_selector(STRIP, timeout=300_000)
    assert page.locator("[data-testid=stAlertContentError]").count() == 0


def test_a_link_carries_language_and_task(speech_url, page):
    page.goto(speech_url + "/?clip=tones-b&language=de&task=translate&view=head&kind=cross")
    page.wait_for_selector(STRIP, timeout=300_000)
    page.wait_for_selector(IDLE)
    assert "language=de" in page.url and "task=translate" in page.url and "clip=tones-b" in page.url
    assert "<|de|>" in page.locator(f"{STEPPER} .lens-side").inner_text()  # step 1 wrote the language
    page.locator(f"{STEPPER} .lens-next").click()
    assert "<|translate|>" in page.locator(f"{STEPPER} .lens-side").inner_text()  # step 2 the task
    page.get_by_text("Transcribe (same language)").click()
    page.wait_for_function("() => location.search.includes('task=transcribe')", timeout=60_000)
    assert "language=de" in page.url
