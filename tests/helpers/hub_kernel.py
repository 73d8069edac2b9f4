"""A kernel of a learner's server on the classroom hub, driven over its websocket as JupyterLab drives it
(tests/helpers/hub_classroom.py's :class:`Learner` opens one): execute cells, read their outputs, move a
widget's slider, reconnect after a dropped connection.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import websocket  # websocket-client, a dependency of jupyter_server


def _decode(frame: str | bytes) -> dict:
    """A kernel message from the websocket: JSON text, or jupyter_server's binary frame (a count n,
    n offsets, the JSON message, then its buffers, e.g. a figure's pixels)."""
    if isinstance(frame, str):
        return json.loads(frame)
    count = int.from_bytes(frame[:4], "big")
    offsets = [int.from_bytes(frame[4 * i:4 * i + 4], "big") for i in range(1, count + 1)]
    return json.loads(frame[offsets[0]:offsets[1] if count > 1 else len(frame)])


@dataclass
class Kernel:
    ws: websocket.WebSocket
    id: str
    learner: object   # the hub_classroom.Learner whose server runs it
    session_id: str
    ws_url: str
    reconnects: int = 0
    comms: dict = field(default_factory=dict)   # comm_id -> widget state (from comm_open)
    session: str = field(default_factory=lambda: uuid.uuid4().hex)

    def _message(self, channel: str, msg_type: str, content: dict) -> dict:
        return {"header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "session": self.session,
                           "username": self.learner.name, "version": "5.3",
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                "parent_header": {}, "metadata": {}, "content": content, "channel": channel, "buffers": []}

    def _receive(self, deadline: float | None = None) -> dict:
        # At most 5 s per read: the server's websocket pings (every 30 s or so) are read inside recv and
        # would restart a longer socket timeout each time, so a silent kernel would never reach the deadline.
        if deadline is not None:
            self.ws.settimeout(min(max(deadline - time.monotonic(), 0.1), 5))
        try:
            msg = _decode(self.ws.recv())
        finally:
            self.ws.settimeout(300)
        if msg.get("msg_type") == "comm_open" or msg["header"]["msg_type"] == "comm_open":
            content = msg["content"]
            self.comms[content["comm_id"]] = dict(content.get("data", {}).get("state", {}))
        elif msg["header"]["msg_type"] == "comm_msg" and msg["content"].get("comm_id") in self.comms:
            data = msg["content"].get("data", {})  # add_class and the like arrive as updates
            if data.get("method") == "update":
                self.comms[msg["content"]["comm_id"]].update(data.get("state", {}))
        return msg

    def wait_for(self, wanted: Callable[[dict], bool], what: str, timeout: float = 120) -> dict:
        """The next message for which ``wanted`` holds (others are read and dropped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(websocket.WebSocketTimeoutException):
                msg = self._receive(deadline)
                if wanted(msg):
                    return msg
        raise AssertionError(f"{self.learner.name}: no {what} within {timeout} s")

    def status(self, state: str, timeout: float = 120) -> dict:
        """Wait for the kernel status ``state`` (``restarting``: the server restarts a kernel that died)."""
        return self.wait_for(lambda m: m["header"]["msg_type"] == "status"
                             and m["content"].get("execution_state") == state, f"status {state!r}", timeout)

    def restarted(self, timeout: float = 120) -> None:
        """The server says it restarts the kernel that died; then, as JupyterLab does, a new websocket
        and the new kernel's kernel_info_reply before anything else is sent. On that socket the server
        first checks that the kernel's outputs reach it (with the course's kernel manager also after
        a kernel died busy: lessons_lib/course/classroom_server.py), so the next cell's outputs and
        idle status arrive even when it is sent at once."""
        self.status("restarting", timeout)
        self.reconnect()
        request = self._message("shell", "kernel_info_request", {})
        self.ws.send(json.dumps(request))
        self.wait_for(lambda m: m["header"]["msg_type"] == "kernel_info_reply"
                      and m["parent_header"].get("msg_id") == request["header"]["msg_id"],
                      "kernel_info_reply from the restarted kernel", timeout)

    def submit(self, code: str) -> str:
        """Send ``code`` to run, as Shift+Enter does; return the request's id without waiting."""
        request = self._message("shell", "execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": True})
        self.ws.send(json.dumps(request))
        return request["header"]["msg_id"]

    def run(self, code: str, timeout: float = 300) -> tuple[dict, list[dict]]:
        """Run ``code``; return its execute_reply's content and its iopub outputs."""
        msg_id = self.submit(code)
        outputs, reply, idle = [], None, False
        deadline = time.monotonic() + timeout
        while not (reply and idle):
            missing = "no idle status after the reply" if reply else "no reply"
            assert time.monotonic() < deadline, f"{missing} to {code[:80]!r} in {timeout} s"
            try:
                msg = self._receive(deadline)
            except websocket.WebSocketTimeoutException:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["header"]["msg_type"]
            if kind == "execute_reply":
                reply = msg["content"]
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
            elif kind in ("stream", "display_data", "execute_result", "error"):
                outputs.append(msg["content"])
        return reply, outputs

    def execute(self, code: str, timeout: float = 300) -> list[dict]:
        """Run ``code``; return its iopub outputs; raise when it fails.

        When the websocket drops (it did under a load average of 20 on 2 cores), reconnect, as
        JupyterLab does, and run the cell again, as the learner would; ``reconnects`` counts it."""
        try:
            reply, outputs = self.run(code, timeout)
        except websocket.WebSocketConnectionClosedException:
            self.reconnects += 1
            self.reconnect()
            reply, outputs = self.run(code, timeout)
        if reply["status"] != "ok":
            raise AssertionError(f"{code[:200]!r} failed: {reply.get('ename')}: {reply.get('evalue')}")
        return outputs

    def text(self, code: str) -> str:
        """What ``code`` prints."""
        return "".join(o.get("text", "") for o in self.execute(code))

    def sliders(self) -> list[str]:
        """comm ids of the explorers' sliders (class lessons-slider-<name>; not lesson 00's echo check)."""
        return [cid for cid, state in self.comms.items()
                if any(c.startswith("lessons-slider-") and c != "lessons-slider-check"
                       for c in state.get("_dom_classes", []))]

    def move(self, slider: str, value: int, timeout: float = 60) -> float:
        """Set the slider as the browser does; seconds until the kernel updates another model in answer
        to this move (its parent header: what is left over from an earlier move does not count)."""
        key = "index" if self.comms[slider].get("_model_name") == "SelectionSliderModel" else "value"
        update = self._message("shell", "comm_msg", {
            "comm_id": slider, "data": {"method": "update", "state": {key: value}, "buffer_paths": []}})
        started = time.perf_counter()
        self.ws.send(json.dumps(update))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self._receive(deadline)
            except websocket.WebSocketTimeoutException:
                continue
            content = msg["content"]
            if (msg["header"]["msg_type"] == "comm_msg" and content.get("comm_id") != slider
                    and msg["parent_header"].get("msg_id") == update["header"]["msg_id"]
                    and content.get("data", {}).get("method") == "update"):
                return time.perf_counter() - started
        raise AssertionError(f"no figure update within {timeout} s of moving the slider")

    def reconnect(self, timeout: float = 0) -> None:
        """A new websocket to the same kernel (its widgets live on): a socket left unread for
        minutes answers no pings, and the server closes it. With ``timeout``, retry until the
        proxy routes the socket again (after a proxy restart), as JupyterLab keeps retrying."""
        with contextlib.suppress(Exception):
            self.ws.close()
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.ws = self.learner.connect(self.ws_url)
                return
            except (websocket.WebSocketException, OSError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        with contextlib.suppress(Exception):
            self.learner.api(f"api/sessions/{self.session_id}", "DELETE")
