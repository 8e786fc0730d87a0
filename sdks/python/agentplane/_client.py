"""The transport of both clients: URLs, headers, retries, pages and streams, on httpx."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import time
from typing import Any, AsyncIterator, Dict, Iterator, List, Mapping, Optional
from urllib.parse import quote

import httpx

from ._errors import APIConnectionError, AgentplaneError, StreamError, error_for, retry_after_seconds
from ._resources import Resources
from ._call import _Call

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_PARAM = re.compile(r"\{(\w+)\}")
TERMINAL = frozenset({"done", "error"})


class _Base(Resources):
    """What both clients share: options, request building and the retry policy."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        workspace: Optional[str] = None,
        max_retries: int = 2,
        max_retry_delay: float = 8.0,
        timeout: float = 600.0,
    ) -> None:
        self.base_url = (base_url or os.environ.get("AGENTPLANE_URL") or "http://127.0.0.1:8080").rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("AGENTPLANE_API_KEY")
        self.workspace = workspace
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self.timeout = timeout
        Resources.__init__(self, self)

    def _url(self, call: _Call) -> str:
        def fill(m: "re.Match[str]") -> str:
            value = call.params.get(m.group(1))
            if not value:
                raise AgentplaneError(f"{m.group(1)} is required")
            return quote(value, safe="")

        return self.base_url + _PARAM.sub(fill, call.template)

    def _headers(self, call: _Call) -> Dict[str, str]:
        h = {"Accept": "text/event-stream" if call.stream else "application/json"}
        if self.api_key:
            h["X-API-Key"] = self.api_key
        if self.workspace:
            h["X-Workspace-ID"] = self.workspace
        if call.idempotency_key:
            h["Idempotency-Key"] = call.idempotency_key
        h.update(call.headers)
        return h

    def _request_args(self, call: _Call) -> Dict[str, Any]:
        args: Dict[str, Any] = {"params": call.query, "headers": self._headers(call)}
        if call.body is not None:
            args["content"] = json.dumps(call.body).encode()
            args["headers"]["Content-Type"] = "application/json"
        return args

    def _retry(self, call: _Call, response: httpx.Response, attempt: int) -> bool:
        """Whether to try again after this answer: a 429 always; 5xx when safe; an idempotent
        request still in progress (409 with Retry-After)."""
        if attempt >= self.max_retries:
            return False
        status = response.status_code
        in_progress = call.idempotent and status == 409 and "retry-after" in response.headers
        return status == 429 or in_progress or (call.safe and status in _RETRY_STATUSES)

    def _delay(self, attempt: int, headers: Optional[httpx.Headers] = None) -> float:
        after = retry_after_seconds(headers) if headers is not None else None
        wait = after if after is not None else 0.25 * 2**attempt * (0.75 + random.random() / 2)
        return min(wait, self.max_retry_delay)

    @staticmethod
    def _next_call(call: _Call, page: Mapping[str, Any]) -> Optional[_Call]:
        cursor = (page.get("pagination") or {}).get("next_cursor")
        if not cursor or not page.get("data"):
            return None
        query = {k: v for k, v in call.query.items() if k != "page"}
        query["cursor"] = cursor
        return _Call(call.method, call.template, call.params, query, headers=call.headers)

    @staticmethod
    def _open_call(call: _Call, last_event_id: Optional[int]) -> _Call:
        headers = dict(call.headers)
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        return _Call(call.method, call.template, call.params, call.query, call.body, call.idempotency_key, headers, True)


class Agentplane(_Base):
    """A client of the agentplane API; one attribute per resource, named as the API names it.

    ``Agentplane()`` reads AGENTPLANE_URL and AGENTPLANE_API_KEY.
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 http_client: Optional[httpx.Client] = None, **options: Any) -> None:
        super().__init__(base_url, api_key, **options)
        self._http = http_client or httpx.Client(timeout=httpx.Timeout(self.timeout, connect=10.0))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Agentplane":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _send(self, call: _Call) -> httpx.Response:
        url, args = self._url(call), self._request_args(call)
        for attempt in range(self.max_retries + 1):
            try:
                req = self._http.build_request(call.method, url, **args)
                if call.stream:
                    req.extensions["timeout"] = httpx.Timeout(None, connect=10.0).as_dict()
                response = self._http.send(req, stream=call.stream)
            except httpx.TransportError as err:
                if call.safe and attempt < self.max_retries:
                    time.sleep(self._delay(attempt))
                    continue
                raise APIConnectionError(f"{call.method} {url}: {err}") from err
            if response.is_success:
                return response
            if call.stream:
                response.read()
                response.close()
            if self._retry(call, response, attempt):
                time.sleep(self._delay(attempt, response.headers))
                continue
            raise error_for(response)
        raise AssertionError("unreachable")

    def _request(self, call: _Call) -> Any:
        return self._send(call).json()["data"]

    def _page(self, call: _Call) -> Dict[str, Any]:
        return self._send(call).json()

    def _paginate(self, call: _Call) -> Iterator[Any]:
        next_call: Optional[_Call] = call
        while next_call is not None:
            page = self._page(next_call)
            yield from page["data"]
            next_call = self._next_call(next_call, page)

    def _stream(self, call: _Call, last_event_id: Optional[int]) -> "Stream":
        return Stream(self, call, last_event_id)


class AsyncAgentplane(_Base):
    """The asyncio client: the same resources, each call awaited, lists and streams ``async for``."""

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 http_client: Optional[httpx.AsyncClient] = None, **options: Any) -> None:
        super().__init__(base_url, api_key, **options)
        self._http = http_client or httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, connect=10.0))

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncAgentplane":
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.close()

    async def _send(self, call: _Call) -> httpx.Response:
        url, args = self._url(call), self._request_args(call)
        for attempt in range(self.max_retries + 1):
            try:
                req = self._http.build_request(call.method, url, **args)
                if call.stream:
                    req.extensions["timeout"] = httpx.Timeout(None, connect=10.0).as_dict()
                response = await self._http.send(req, stream=call.stream)
            except httpx.TransportError as err:
                if call.safe and attempt < self.max_retries:
                    await asyncio.sleep(self._delay(attempt))
                    continue
                raise APIConnectionError(f"{call.method} {url}: {err}") from err
            if response.is_success:
                return response
            if call.stream:
                await response.aread()
                await response.aclose()
            if self._retry(call, response, attempt):
                await asyncio.sleep(self._delay(attempt, response.headers))
                continue
            raise error_for(response)
        raise AssertionError("unreachable")

    async def _request(self, call: _Call) -> Any:
        return (await self._send(call)).json()["data"]

    async def _page(self, call: _Call) -> Dict[str, Any]:
        return (await self._send(call)).json()

    async def _paginate(self, call: _Call) -> AsyncIterator[Any]:
        next_call: Optional[_Call] = call
        while next_call is not None:
            page = await self._page(next_call)
            for item in page["data"]:
                yield item
            next_call = self._next_call(next_call, page)

    def _stream(self, call: _Call, last_event_id: Optional[int]) -> "AsyncStream":
        return AsyncStream(self, call, last_event_id)


class Event:
    """One frame of a stream: its per-execution sequence number ``id``, its ``event`` name
    (execution, thinking, tool_start, tool_end, content, done, error) and its decoded ``data``."""

    __slots__ = ("id", "event", "data")

    def __init__(self, id: int, event: str, data: Any) -> None:
        self.id, self.event, self.data = id, event, data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and (self.id, self.event, self.data) == (other.id, other.event, other.data)

    def __repr__(self) -> str:
        return f"Event(id={self.id}, event={self.event!r}, data={self.data!r})"


class _Decoder:
    """Turns text/event-stream lines into events; comments and unnamed frames are skipped."""

    def __init__(self) -> None:
        self.id, self.event = "", ""
        self.data: List[str] = []

    def line(self, line: str) -> Optional[Event]:
        line = line.rstrip("\r\n")  # httpx before 0.24 keeps the line ending
        if line == "":
            ev = None
            if self.event and self.data:
                ev = Event(int(self.id or 0), self.event, json.loads("\n".join(self.data)))
            self.event, self.data = "", []
            return ev
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "id":
            self.id = value
        elif field == "event":
            self.event = value
        elif field == "data":
            self.data.append(value)
        return None


class _Resume:
    """The resume bookkeeping both stream kinds share: the last id, progress and failures."""

    def __init__(self, client: _Base, call: _Call, last_event_id: Optional[int]) -> None:
        self._client, self._call = client, call
        self.last_event_id = last_event_id
        self.reconnects = 0
        self._failures = 0

    def _take(self, decoder: _Decoder, line: str) -> Optional[Event]:
        """The event a line completes, unless it is one already yielded (a resumed connection
        never repeats one, but a proxy may)."""
        ev = decoder.line(line)
        if ev is None or (self.last_event_id is not None and ev.id <= self.last_event_id):
            return None
        self.last_event_id = ev.id
        return ev

    def _dropped(self, progressed: bool) -> float:
        """Counts a dropped connection; returns how long to wait before opening it again."""
        self._failures = 0 if progressed else self._failures + 1
        if self._failures > self._client.max_retries:
            raise StreamError(
                f"the stream ended before its terminal frame (after frame {self.last_event_id}) and could not be resumed"
            )
        self.reconnects += 1
        return 0.0 if progressed else self._client._delay(self._failures - 1)


class Stream(_Resume):
    """A stream as an iterator of :class:`Event`, resumed with Last-Event-ID after a dropped
    connection: every frame once, none missed. ``close()`` (or leaving the loop) ends it; the run goes on."""

    def __init__(self, client: Agentplane, call: _Call, last_event_id: Optional[int]) -> None:
        super().__init__(client, call, last_event_id)
        self._sync = client
        self._response: Optional[httpx.Response] = None

    def __iter__(self) -> Iterator[Event]:
        while True:
            response = self._sync._send(self._client._open_call(self._call, self.last_event_id))
            if response.status_code == 204:
                response.close()
                return
            self._response, progressed = response, False
            decoder = _Decoder()
            try:
                for line in response.iter_lines():
                    ev = self._take(decoder, line)
                    if ev is None:
                        continue
                    progressed = True
                    yield ev
                    if ev.event in TERMINAL:
                        return
            except httpx.TransportError:
                pass  # a dropped connection: resume below
            finally:
                response.close()
            time.sleep(self._dropped(progressed))

    def close(self) -> None:
        if self._response is not None:
            self._response.close()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class AsyncStream(_Resume):
    """The asyncio stream: ``async for ev in stream``; cancelling the task ends it."""

    def __init__(self, client: AsyncAgentplane, call: _Call, last_event_id: Optional[int]) -> None:
        super().__init__(client, call, last_event_id)
        self._async = client

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            response = await self._async._send(self._client._open_call(self._call, self.last_event_id))
            if response.status_code == 204:
                await response.aclose()
                return
            progressed = False
            decoder = _Decoder()
            try:
                async for line in response.aiter_lines():
                    ev = self._take(decoder, line)
                    if ev is None:
                        continue
                    progressed = True
                    yield ev
                    if ev.event in TERMINAL:
                        return
            except httpx.TransportError:
                pass  # a dropped connection: resume below
            finally:
                await response.aclose()
            await asyncio.sleep(self._dropped(progressed))
