"""A Streamlit client without a browser: one session over Streamlit's own websocket protocol.

What a browser tab does, at the protocol level (Streamlit 1.67, served by uvicorn/starlette):

- GET the page (`/`), keeping its cookies: a proxy that pins a visitor to a replica by cookie sets it here;
- open a websocket to `/_stcore/stream` with the subprotocol `streamlit`; every frame is binary, one protobuf:
  the client sends `BackMsg`, the server sends `ForwardMsg`;
- ask for a run with `BackMsg.rerun_script` (a `ClientState`: page, query string, widget states, and the
  fragment id when the widget that changed lives in an `st.fragment`). A button click is a `WidgetState` with
  `trigger_value = True`; a typed text is one with `string_value`;
- every run answers `new_session` (its run id and fragment ids), then `delta`s, each addressed by
  `metadata.delta_path` (the element's place in the page tree), then `script_finished`.

The client keeps the page as the frontend does: path -> element, and after each run it drops what that run
should have redrawn but did not (the whole page for a full run, the fragment's own elements for a fragment
run). Widgets are found by label or key (their id ends with `-<key>`), never by position.
"""

from __future__ import annotations

import asyncio
import http.cookies
import time
import urllib.request
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

STREAM = "/_stcore/stream"


@dataclass
class Shown:
    """One element of the page as the client holds it."""

    element: Element
    fragment_id: str
    run_id: str
    arrived: float  # time.perf_counter() when its frame arrived


Page = dict[tuple[int, ...], Shown]  # delta path -> what is drawn there


@dataclass
class Run:
    """What one script run sent."""

    run_id: str = ""
    fragment_ids: tuple[str, ...] = ()
    paths: list[tuple[int, ...]] = field(default_factory=list)
    finished: float | None = None
    problems: list[str] = field(default_factory=list)  # exceptions and error boxes the run drew


def widget_key(element: Element) -> str | None:
    """The user key of a widget (`$$ID-<hash>-<key>`), or None."""
    kind = element.WhichOneof("type")
    wid = getattr(getattr(element, kind), "id", "") if kind else ""
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
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.headers: dict[str, str] = {}  # of the page GET
        self.replica: str | None = None  # the X-Lens-Replica header nginx adds (deploy/): who holds the stream
        self.page: Page = {}
        self.widgets: dict[str, WidgetState] = {}  # values this client has set (typed text, ...)
        self.session_id = ""
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
    async def rerun(self, trigger: Shown | None = None, **values) -> Run:
        """Ask for a run and wait for it to finish. `trigger` is a button to click (its fragment is rerun alone
        when it lives in one); `values` maps widget keys to new values (str, bool, int or float)."""
        for key, value in values.items():
            shown = find_by_key(self.page, key)
            if shown is None:
                raise LookupError(f"no widget with key {key!r} on the page")
            self.widgets[key] = widget_state(shown.element, value)
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = ""
        cs.page_script_hash = ""
        cs.page_name = self.page_name
        cs.widget_states.widgets.extend(self.widgets.values())
        if trigger is not None:
            state = widget_state(trigger.element, True)
            cs.widget_states.widgets.append(state)
            cs.fragment_id = trigger.fragment_id
        while not self._runs.empty():  # runs nobody asked for (none expected) are not this one's answer
            self._runs.get_nowait()
        await self._ws.send(msg.SerializeToString())
        return await asyncio.wait_for(self._runs.get(), self.timeout)

    async def _read(self) -> None:
        try:
            async for frame in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(frame)
                self._handle(msg, time.perf_counter())
        except websockets.ConnectionClosed as exc:
            self.closed_reason = f"connection closed: {exc}"
        if self.closed_reason is None:
            self.closed_reason = "connection closed"
        self._runs.put_nowait(Run(problems=[self.closed_reason]))

    def _handle(self, msg: ForwardMsg, now: float) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            run = msg.metadata.run
            self._run = Run(run_id=run.script_run_id, fragment_ids=tuple(run.fragment_ids))
            self.session_id = msg.new_session.initialize.session_id or self.session_id
        elif kind == "delta" and self._run is not None:
            delta = msg.delta
            path = tuple(msg.metadata.delta_path)
            self._run.paths.append(path)
            if delta.WhichOneof("type") == "new_element":
                el = delta.new_element
                self.page[path] = Shown(el, delta.fragment_id, self._run.run_id, now)
                problem = problem_text(el)
                if problem:
                    self._run.problems.append(problem)
            elif delta.WhichOneof("type") == "add_block":
                self.page.pop(path, None)
        elif kind == "script_finished" and self._run is not None:
            run, self._run = self._run, None
            run.finished = now
            self._drop_stale(run)
            self._runs.put_nowait(run)

    def _drop_stale(self, run: Run) -> None:
        """What the frontend does after a run: elements of the run's scope that it did not redraw are gone."""
        for path, shown in list(self.page.items()):
            in_scope = not run.fragment_ids or shown.fragment_id in run.fragment_ids
            if in_scope and shown.run_id != run.run_id:
                del self.page[path]


def find_by_key(page: Page, key: str) -> Shown | None:
    for path in sorted(page):
        if widget_key(page[path].element) == key:
            return page[path]
    return None


def widget_state(element: Element, value) -> WidgetState:
    kind = element.WhichOneof("type")
    state = WidgetState(id=getattr(element, kind).id)
    if kind in ("button", "download_button") and value is True:
        state.trigger_value = True
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


def problem_text(el: Element) -> str | None:
    kind = el.WhichOneof("type")
    if kind == "exception":
        return f"exception: {el.exception.type}: {el.exception.message}"[:300]
    if kind == "alert" and el.alert.format == el.alert.ERROR:
        return f"error box: {el.alert.body}"[:300]
    return None
