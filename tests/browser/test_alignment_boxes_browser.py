"""The Alignment page's method boxes at 1366 x 768 in Chromium (shipped en-fr): the Layer box shows its whole
value on opening (the mean over layers read "all (mean" cut)."""

from __future__ import annotations

import pytest

from harness.browser import IDLE, browser_page

pytestmark = [pytest.mark.browser]
CUT = """() => [...document.querySelectorAll('.st-key-align_layer input, .st-key-align_head input')]
    .filter(i => i.scrollWidth > i.clientWidth + 1).map(i => i.value)"""


def test_the_layer_and_head_boxes_show_their_values_whole(shipped_server):
    with browser_page(f"{shipped_server}/Alignment?model=en-fr", 1366, 768, device_scale_factor=1) as page:
        page.locator(".st-key-align_layer input").wait_for(timeout=180_000)
        page.locator(IDLE).wait_for(timeout=180_000)
        page.wait_for_timeout(500)
        assert page.locator(".st-key-align_layer input").input_value() != ""
        assert page.evaluate(CUT) == []


def test_a_file_over_the_cap_is_refused_on_the_page_with_what_to_do(shipped_server, tmp_path):
    """A 21 MB upload on the Alignment page (cap 8 MB): the page says it is too big and names the command that
    reads any size (the uploader refused it itself before: a red chip, its reason only in a hover tooltip)."""
    from attention_lens.app import uploads
    from playwright.sync_api import expect

    big = tmp_path / "big20mb.tsv"
    line = b"the cat sat .\tle chat s' assit .\n"
    big.write_bytes(line * (21 * 1024 * 1024 // len(line)))
    with browser_page(f"{shipped_server}/Alignment?model=en-fr", 1366, 768, device_scale_factor=1) as page:
        page.locator(IDLE).wait_for(timeout=120_000)
        page.locator("[data-testid=stFileUploaderDropzoneInput]").first.set_input_files(str(big))
        message = page.get_by_text(f"this page reads files of {uploads.UPLOAD_CAP_TEXT}", exact=False)
        expect(message).to_be_visible(timeout=120_000)
        assert "attention-lens align" in message.inner_text()
