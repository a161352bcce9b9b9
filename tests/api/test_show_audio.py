"""The notebook view of a clip's run: its frames pooled as the app sends them (a 10 s clip at whisper-tiny's
dimensions: 500 frames, 167 columns and the padding), its title naming the clip rather than 500 time labels."""

from __future__ import annotations

import json
import re

import attention_lens
from tests.fixtures.audio_trace import audio_trace


def test_a_ten_second_clip_is_pooled_and_named():
    trace = audio_trace(seconds=10.0, words=("a",) * 30)
    html = attention_lens.show(trace, kind="cross").html
    data = json.loads(re.search(r'<script type="application/json" class="al-data">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))
    assert len(data["source"]) == 168 and data["source"][-1].startswith("padding")
    cross = data["readings"]["weights"]["cross_attention"]
    assert len(cross) == 4 and len(cross[0]) == 6 and len(cross[0][0][0]) == 168
    assert "a clip of 10.00 s, 167 columns of 60 ms and the padding" in html
    assert len(html) < 8 * 2**20  # 6.3 MB; unpooled, the same run's view was 42.8 MB
