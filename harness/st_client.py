"""A Streamlit client without a browser: one session over Streamlit's own websocket protocol, sending what a
browser tab sends.

What a browser tab does, at the protocol level (Streamlit 1.67, served by uvicorn/starlette):

- GET the page (`/`), keeping its cookies: a proxy that pins a visitor to a replica by cookie sets it here;
- open a websocket to `/_stcore/stream` with the subprotocol `streamlit`; every frame is binary, one protobuf:
  the client sends `BackMsg`, the server sends `ForwardMsg`;
- ask for a run with `BackMsg.rerun_script`, a `ClientState` that Chromium fills with: the page's query string
  (which the app rewrites: `page_info_changed`), the page's script hash (from `new_session`), the value of every
  widget on the page (a widget the user never touched sends its default; a value the app set in session state
  arrives with `set_value`), the fragment id when the widget that changed lives in an `st.fragment`, the hashes
  of the large elements it holds in its cache (which the server then sends as `ref_hash` references), and
  `context_info` (time zone, locale, URL, embedding, colour scheme). A button click is a `WidgetState` with
  `trigger_value = True`; a typed text one with `string_value`;
- every run answers `new_session` (its run id and fragment ids), then `delta`s, each addressed by
  `metadata.delta_path` (the element's place in the page tree), then `script_finished`.

`tests/fixtures/next_click.json` is a Next click captured from Chromium (benchmarks/browser_load_test.py
--capture-click); tests/test_load.py checks that `Session.rerun_message` has the same fields.

The client keeps the page as the frontend does: path -> element, and after each run it drops what that run
should have redrawn but did not (the whole page for a full run, the fragment's own elements for a fragment
run). Widgets are found by label or key (their id ends with `-<key>`), never by position.
"""

from __future__ import annotations

import asyncio
import http.cookies
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Block_pb2 import Block
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

STREAM = "/_stcore/stream"
# What Debian's Chromium under Playwright reported (tests/fixtures/next_click.json): a class's browsers differ
# only in these values, not in which fields they send.
CONTEXT = {"timezone": "UTC", "timezone_offset": 0, "locale": "en-US", "is_embedded": False, "color_scheme": "light"}
CACHE_RUNS = 2  # the frontend forgets a cached element after this many runs that did not use it


@dataclass
class Shown:
    """One element of the page as the client holds it."""

    element: Element
    fragment_id: str
    run_id: str
    arrived: float  # time.perf_counter() when its frame arrived


@dataclass
class ShownBlock:
    """A container that is a widget (an expander or popover whose open state the app reads)."""

    block: Block
    fragment_id: str
    run_id: str


Page = dict[tuple[int, ...], Shown]  # delta path -> what is drawn there


@dataclass
class Run:
    """What one script run sent."""

    run_id: str = ""
    fragment_ids: tuple[str, ...] = ()
    paths: list[tuple[int, ...]] = field(default_factory=list)
    started: float | None = None  # its first message (new_session)
    finished: float | None = None  # script_finished
    problems: list[str] = field(default_factory=list)  # exceptions and error boxes the run drew
    messages: int = 0  # ForwardMsgs from new_session to script_finished, both included
    blocks: int = 0  # of them add_block deltas
    elements: int = 0  # of them new_element deltas (references to cached elements included)
    nbytes: int = 0  # their frames' bytes


def widget_key(element: Element) -> str | None:
    """The user key of a widget (`$$ID-<hash>-<key>`), or None."""
    kind = element.WhichOneof("type")
    wid = getattr(getattr(element, kind), "id", "") if kind else ""
    return key_of(wid)


def key_of(wid: str) -> str | None:
    if not isinstance(wid, str) or not wid.startswith("$$ID-"):
        return None
    key = wid.split("-", 2)[-1]
    return None if key == "None" else key


def find(page: Page, kind: str, label: str | None = None, key: str | None = None) -> Shown | None:
    """The first element (in page order) of this kind with this label or key."""
    for path in sorted(page):
        shown = page[path]
        el = shown.element
        if el.WhichOneof("type") != kind:
            continue
        proto = getattr(el, kind)
        if label is not None and getattr(proto, "label", None) == label:
            return shown
        if key is not None and widget_key(el) == key:
            return shown
    return None


class Session:
    """One browser tab's worth of Streamlit session, driven from asyncio."""

    def __init__(self, url: str, timeout: float = 120.0):
        parts = urllib.parse.urlsplit(url)
        self.url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")).rstrip("/")
        self.query_string = parts.query  # the address bar's, as the app rewrites it
        self.opened_url = self.url + "/" + (f"?{parts.query}" if parts.query else "")  # context_info's url
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.headers: dict[str, str] = {}  # of the page GET
        self.replica: str | None = None  # the X-Lens-Replica header nginx adds (deploy/): who holds the stream
        self.page: Page = {}
        self.blocks: dict[tuple[int, ...], ShownBlock] = {}  # containers that are widgets
        # popovers on the page: the frontend mounts a popover's widgets only once it is opened, so until then a
        # browser sends none of their values (the word panel's lookup box, for one)
        self.popovers: dict[tuple[int, ...], ShownBlock] = {}
        self.values: dict[str, WidgetState] = {}  # widget id -> its value, as the frontend holds it
        self.widgets: dict[str, WidgetState] = {}  # key -> values this client has set (typed text, ...)
        self.session_id = ""
        self.page_script_hash = ""
        self._cache: dict[str, ForwardMsg] = {}  # hash -> a large element the frontend keeps
        self._cache_age: dict[str, int] = {}  # hash -> runs since it was last used
        self._ws = None
        self._runs: asyncio.Queue[Run] = asyncio.Queue()
        self._reader: asyncio.Task | None = None
        self._run: Run | None = None
        self.closed_reason: str | None = None
        self.page_name = ""  # the page runs ask for ("Alignment", ...; "" is the default page)

    # ---- connection ------------------------------------------------------------------------------------------
    def _get_page(self) -> None:
        req = urllib.request.Request(self.url + "/", headers=self._cookie_header())
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            resp.read()
            self.headers = {k.lower(): v for k, v in resp.headers.items()}
            for raw in resp.headers.get_all("Set-Cookie") or []:
                jar = http.cookies.SimpleCookie(raw)
                self.cookies.update({name: morsel.value for name, morsel in jar.items()})

    def _cookie_header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}

    async def open(self) -> Run:
        """Load the page like a browser: GET it, open the stream, run the script once."""
        await asyncio.to_thread(self._get_page)
        await self._connect()
        return await self.rerun()

    async def reconnect(self) -> Run:
        """Drop the websocket and open a new one naming this session, as a browser does after a network blip:
        the server that holds the session resumes it; any other starts a new one."""
        await self.close()
        await self._connect(self.session_id)
        return await self.rerun()

    async def _connect(self, session_id: str = "") -> None:
        # The subprotocol list carries tokens: ("streamlit", XSRF token, session to resume).
        protocols = ["streamlit", "PLACEHOLDER_AUTH_TOKEN", session_id] if session_id else ["streamlit"]
        self.closed_reason = None
        self._ws = await websockets.connect("ws" + self.url[len("http"):] + STREAM, subprotocols=protocols,
                                            max_size=None, additional_headers=self._cookie_header(),
                                            open_timeout=self.timeout)
        self.replica = self._ws.response.headers.get("x-lens-replica")
        self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        self._ws = self._reader = None
        while not self._runs.empty():
            self._runs.get_nowait()

    # ---- runs ------------------------------------------------------------------------------------------------
    def rerun_message(self, trigger: Shown | None = None, **values) -> BackMsg:
        """The BackMsg a browser sends to ask for a run: `trigger` is a button to click (its fragment is rerun
        alone when it lives in one); `values` maps widget keys to new values (str, bool, int or float)."""
        for key, value in values.items():
            shown = find_by_key(self.page, key)
            block = next((b for b in self.blocks.values() if key_of(b.block.id) == key), None)
            if shown is not None:
                state = widget_state(shown.element, value)
            elif block is not None and isinstance(value, bool):  # open (True) or close an expander or popover
                state = WidgetState(id=block.block.id, bool_value=value)
            else:
                raise LookupError(f"no widget with key {key!r} on the page")
            self.widgets[key] = self.values[state.id] = state
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query_string
        cs.page_script_hash = self.page_script_hash
        cs.page_name = self.page_name
        cs.widget_states.widgets.extend(self.values.values())
        if trigger is not None:
            cs.widget_states.widgets.append(widget_state(trigger.element, True))
            cs.fragment_id = trigger.fragment_id
        cs.cached_message_hashes.extend(self._cache)
        ctx = cs.context_info
        for name, value in CONTEXT.items():
            setattr(ctx, name, value)
        ctx.url = self.opened_url  # the address the tab opened (Chromium does not update it as the app writes)
        return msg

    async def rerun(self, trigger: Shown | None = None, **values) -> Run:
        """Ask for a run (see rerun_message) and wait for it to finish."""
        msg = self.rerun_message(trigger, **values)
        while not self._runs.empty():  # runs nobody asked for (none expected) are not this one's answer
            self._runs.get_nowait()
        await self._ws.send(msg.SerializeToString())
        return await asyncio.wait_for(self._runs.get(), self.timeout)

    async def _read(self) -> None:
        try:
            async for frame in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(frame)
                self._handle(msg, time.perf_counter(), len(frame))
        except websockets.ConnectionClosed as exc:
            self.closed_reason = f"connection closed: {exc}"
        if self.closed_reason is None:
            self.closed_reason = "connection closed"
        self._runs.put_nowait(Run(problems=[self.closed_reason]))

    def _handle(self, msg: ForwardMsg, now: float, nbytes: int = 0) -> None:
        if msg.WhichOneof("type") == "ref_hash":  # an element this client holds: the server sent its hash only
            cached = self._cache.get(msg.ref_hash)
            if cached is None:
                if self._run is not None:
                    self._run.problems.append(f"reference to an element not in the cache: {msg.ref_hash}")
                return
            self._cache_age[msg.ref_hash] = 0
            full = ForwardMsg()
            full.CopyFrom(cached)
            full.metadata.CopyFrom(msg.metadata)
            msg = full
        elif msg.metadata.cacheable and msg.hash:
            self._cache[msg.hash] = msg
            self._cache_age[msg.hash] = 0
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            run = msg.metadata.run
            self._run = Run(run_id=run.script_run_id, fragment_ids=tuple(run.fragment_ids), started=now)
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            self.page_script_hash = msg.new_session.page_script_hash or self.page_script_hash
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        if self._run is None:
            return
        self._run.messages += 1
        self._run.nbytes += nbytes
        if kind == "delta":
            delta = msg.delta
            path = tuple(msg.metadata.delta_path)
            self._run.paths.append(path)
            if delta.WhichOneof("type") == "new_element":
                self._run.elements += 1
                el = delta.new_element
                self.page[path] = Shown(el, delta.fragment_id, self._run.run_id, now)
                self.blocks.pop(path, None)
                if not self._in_closed_popover(path):
                    self._take_value(el)
                problem = problem_text(el)
                if problem:
                    self._run.problems.append(problem)
            elif delta.WhichOneof("type") == "add_block":
                self._run.blocks += 1
                self.page.pop(path, None)
                block = delta.add_block
                if block.WhichOneof("type") == "popover":
                    self.popovers[path] = ShownBlock(block, delta.fragment_id, self._run.run_id)
                else:
                    self.popovers.pop(path, None)
                if block_state(block) is not None:  # its value is sent once the user has opened or closed it
                    self.blocks[path] = ShownBlock(block, delta.fragment_id, self._run.run_id)
                else:
                    self.blocks.pop(path, None)
        elif kind == "script_finished":
            run, self._run = self._run, None
            run.finished = now
            self._drop_stale(run)
            self._runs.put_nowait(run)

    def _in_closed_popover(self, path: tuple[int, ...]) -> bool:
        """Whether the element at `path` lies in a popover this client has not opened."""
        for k in range(1, len(path)):
            shown = self.popovers.get(path[:k])
            if shown is not None:
                wid = shown.block.popover.id if shown.block.popover.HasField("id") else ""
                if not (wid and wid in self.values and self.values[wid].bool_value):
                    return True
        return False

    def _take_value(self, el: Element) -> None:
        """What the frontend does when a widget is drawn: a value the app set replaces the one held; otherwise
        the held value stays, and a new widget starts on its default."""
        kind = el.WhichOneof("type")
        proto = getattr(el, kind)
        wid = getattr(proto, "id", "")
        if not isinstance(wid, str) or not wid.startswith("$$ID-"):
            return
        if getattr(proto, "set_value", False) or wid not in self.values:
            state = drawn_state(el)
            if state is not None:
                self.values[wid] = state
            if getattr(proto, "set_value", False) and (key := widget_key(el)) in self.widgets:
                del self.widgets[key]  # the app's value wins over the one this client typed

    def _drop_stale(self, run: Run) -> None:
        """What the frontend does after a run: elements of the run's scope that it did not redraw are gone, and
        so are the values of widgets no longer on the page; cached elements unused for CACHE_RUNS runs too."""
        for store in (self.page, self.blocks, self.popovers):
            for path, shown in list(store.items()):
                in_scope = not run.fragment_ids or shown.fragment_id in run.fragment_ids
                if in_scope and shown.run_id != run.run_id:
                    del store[path]
        drawn = {getattr(getattr(s.element, s.element.WhichOneof("type")), "id", "") for s in self.page.values()}
        drawn |= {b.block.id for b in self.blocks.values()}
        for wid in [w for w in self.values if w not in drawn]:
            del self.values[wid]
        for h in list(self._cache_age):
            self._cache_age[h] += 1
            if self._cache_age[h] > CACHE_RUNS:
                del self._cache[h], self._cache_age[h]


def find_by_key(page: Page, key: str) -> Shown | None:
    for path in sorted(page):
        if widget_key(page[path].element) == key:
            return page[path]
    return None


def widget_state(element: Element, value) -> WidgetState:
    """The state a browser sends when the user sets this widget to `value` (True clicks a button)."""
    kind = element.WhichOneof("type")
    state = WidgetState(id=getattr(element, kind).id)
    if kind in ("button", "download_button") and value is True:
        state.trigger_value = True
    elif kind == "button_group":
        state.string_array_value.data.extend([value] if isinstance(value, str) else list(value))
    elif isinstance(value, str):
        state.string_value = value
    elif isinstance(value, bool):
        state.bool_value = value
    elif isinstance(value, int) and kind != "slider":
        state.int_value = value
    elif isinstance(value, int | float):
        state.double_array_value.data.append(float(value))  # a single-value slider sends a one-item array
    else:
        raise TypeError(f"cannot send {value!r} to a {kind}")
    return state


def drawn_state(el: Element) -> WidgetState | None:
    """The value a browser holds for a widget just drawn: the one the app set (set_value), else the default.
    None for widgets that hold no value (buttons) or have none yet (a select box with no choice)."""
    kind = el.WhichOneof("type")
    p = getattr(el, kind)
    state = WidgetState(id=p.id)
    given = bool(getattr(p, "set_value", False))
    if kind in ("checkbox",):
        state.bool_value = p.value if given else p.default
    elif kind in ("text_input", "text_area"):
        text = p.value if given and p.HasField("value") else p.default if p.HasField("default") else None
        if text is None:
            return None
        state.string_value = text
    elif kind in ("selectbox", "radio"):
        if given and p.HasField("raw_value"):
            state.string_value = p.raw_value
        elif p.HasField("default") and 0 <= p.default < len(p.options):
            state.string_value = p.options[p.default]
        else:
            return None
    elif kind == "slider":
        state.double_array_value.data.extend(p.value if given else p.default)
    elif kind == "button_group":
        state.string_array_value.data.extend(p.raw_values if given else [p.options[i].content for i in p.default])
    elif kind == "multiselect":
        state.string_array_value.data.extend(p.raw_values if given else [p.options[i] for i in p.default])
    elif kind == "number_input":
        number = p.value if given and p.HasField("value") else p.default if p.HasField("default") else None
        if number is None:
            return None
        if p.data_type == p.INT:
            state.int_value = int(number)
        else:
            state.double_value = number
    else:  # buttons, download buttons, and kinds Explore does not draw
        return None
    return state


def block_state(block: Block) -> WidgetState | None:
    """An expander's or popover's open state, when the app reads it (the block has a widget id). Chromium sends
    it only once the user has opened or closed the block (tests/fixtures/next_click.json has none)."""
    kind = block.WhichOneof("type")
    if kind == "expandable" and block.expandable.HasField("id"):
        return WidgetState(id=block.expandable.id, bool_value=block.expandable.expanded)
    if kind == "popover" and block.popover.HasField("id"):
        return WidgetState(id=block.popover.id, bool_value=block.popover.open)
    return None


def problem_text(el: Element) -> str | None:
    kind = el.WhichOneof("type")
    if kind == "exception":
        return f"exception: {el.exception.type}: {el.exception.message}"[:300]
    if kind == "alert" and el.alert.format == el.alert.ERROR:
        return f"error box: {el.alert.body}"[:300]
    return None
