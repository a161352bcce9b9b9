"""The URL state of the pages besides Explore (Leakage lab, Alignment, Heads, Compare): a link reproduces the page;
and how such a page opens (open_page: link, model picker, title, notices, defaults).

Explore has its own module (explore/url.py); the parameters every page shares (`model`, `text`, `target`) are read
by its `apply`, so a sentence and a model mean the same on every page. A page names its own parameters as
rules: (session key, parse the URL's text, write the value as text). Parameters in the address bar that no page
of this session wrote (a link) go into session state (a bad one is dropped with a notice, its default kept);
after every run the page's state is written back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import streamlit as st
from attention_lens.app import state
from attention_lens.app.render import share
from attention_lens.app.screens.explore import url
from attention_lens.app.services import Engine
from attention_lens.app.state import K_MODEL, K_SOURCE, K_TARGET

Rule = tuple[str, Callable[[str], Any], Callable[[Any], str]]
SHARED = ("model", "text", "target")
K_READ, K_NOTICES = "page_url_read_", "page_url_notices_"
# Copy link's box, in the page's own DOM: the link as the address bar holds it (app/render/share)
LINK_BOX = st.components.v2.component("attention_lens_share_link", js=share.asset("share_link.js"),
                                      css=share.asset("share_link.css"), isolate_styles=False)


def one_of(allowed) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in allowed:
            raise ValueError(f"not one of {', '.join(map(str, allowed))}")
        return raw
    return parse


def number_in(allowed, cast=int) -> Callable[[str], Any]:
    def parse(raw: str):
        value = cast(raw)
        if value not in allowed:
            raise ValueError("not a value this page offers")
        return value
    return parse


def flag(raw: str) -> bool:
    return one_of(("0", "1"))(raw) == "1"


def read_once(page: str, rules: dict[str, Rule]) -> None:
    """A link's parameters into session state, once (call before the model picker runs). Parameters that a
    page of this session wrote itself (still in the address bar after moving to another page) are no link."""
    ss = st.session_state
    params = st.query_params.to_dict()
    if not params or params == ss.get(url.K_WRITTEN) or ss.get(K_READ + page) == params:
        return
    ss[K_READ + page] = params
    notices = url.apply({k: v for k, v in params.items() if k in SHARED})
    for name, raw in params.items():
        if name in SHARED:
            continue
        if name not in rules:
            notices.append(f"`{name}` is not a link parameter of this page; ignored.")
            continue
        key, parse, _ = rules[name]
        try:
            ss[key] = parse(raw)
        except (ValueError, KeyError) as exc:
            notices.append(f"`{name}={raw[:40]}` cannot be used ({exc or 'not valid'}); the default is shown.")
    ss[K_NOTICES + page] = notices


def show_notices(page: str) -> None:
    for note in st.session_state.pop(K_NOTICES + page, []):
        st.warning(note, icon=":material/link_off:")


def open_page(page: str, rules: dict[str, Rule], title: str, caption: str,
              defaults: dict[str, Any] | None = None) -> tuple[str, Engine]:
    """How a linked page opens: the link's parameters into session state (before the model picker runs, so a
    linked model is the one picked), the model picker, title and caption (state.page_header), the link's notices
    under them, then `defaults` for the session keys neither the link nor an earlier run set. Returns
    (model key, engine)."""
    read_once(page, rules)
    model_key, engine = state.page_header(title, caption)
    show_notices(page)
    for key, value in (defaults or {}).items():
        st.session_state.setdefault(key, value)
    return model_key, engine


def write(rules: dict[str, Rule], sentence: bool = True) -> str:
    """The page's state into the address bar: the model (and the sentence), then each rule's value. Returns the
    link to it."""
    ss = st.session_state
    params = {"model": str(ss.get(K_MODEL, ""))}
    if sentence:
        params |= {"text": str(ss.get(K_SOURCE, "")), "target": str(ss.get(K_TARGET, "") or "")}
    params |= {name: fmt(ss[key]) for name, (key, _, fmt) in rules.items() if ss.get(key) is not None}
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    ss[url.K_WRITTEN] = params
    return f"{(st.context.url or '').split('?')[0]}?{urlencode(params)}"


def share_popover(container, key: str):
    """A "Copy link" popover like Explore's; fill it with share_link once the page's link is written. Its content
    is drawn only while it is open (key + on_change)."""
    return container.popover(":material/link: Copy link", width="stretch", key=key, on_change="rerun")


def share_link(popover, link: str, key: str, what: str = "model, sentence and the page's settings") -> None:
    """Fill an open Copy link popover: a caption saying what the link holds, and the link. The box shows the
    browser's address bar, which the steppers keep at the step and view on screen without telling the server;
    `link` (the server's, for the state it has heard) is what a client without a browser reads."""
    if popover.open:
        popover.caption(f"This page as a link ({what}):")
        with popover:
            LINK_BOX(key=key, data={"link": link})
