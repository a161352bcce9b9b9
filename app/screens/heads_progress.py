"""What the Heads page's progress bar says while an upload's heads are ranked: pairs done of the total, the rate
and the time left at that rate (kept apart from the page, which Streamlit runs as a script)."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """"2 h 05 min", "3 min 20 s", "45 s"."""
    s = max(0, round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


def progress_text(done: int, total: int, seconds: float) -> str:
    """What the progress bar says: pairs done of the total, the rate and the time left at that rate."""
    text = f"Ranking the heads: {done:,} of {total:,} pairs"
    if done and seconds > 0:
        rate = done / seconds
        text += f" · {rate:,.1f} pairs/s · about {duration((total - done) / rate)} left"
    return text
