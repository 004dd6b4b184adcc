"""Headless Chromium driven over the DevTools protocol on a pipe, for checking report.html as a browser lays it out.

No websocket and no port: Chromium reads commands on fd 3 and writes replies on fd 4
(`--remote-debugging-pipe`), one JSON message per NUL-terminated frame. Each page gets an emulated
viewport (any width, below the 500 px a headless window allows), so layouts are measured at phone
widths too.

    with Browser() as browser:
        page = browser.open(url, width=390)
        overflow = page.evaluate("document.documentElement.scrollWidth")
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any


class BrowserError(RuntimeError):
    pass


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class Browser:
    """One headless Chromium process; `open(url, width)` gives a loaded Page."""

    def __init__(self, executable: str | None = None, timeout_s: float = 60.0) -> None:
        self.executable = executable or find_chromium()
        if self.executable is None:
            raise BrowserError("headless Chromium is not installed (apt-get install chromium)")
        self.timeout_s = timeout_s  # a bound for a broken browser, never a pace: every wait is for an event
        self.profile = tempfile.mkdtemp(prefix="netarena-chromium-")
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.buffer = b""
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()

        def to_fds_3_and_4() -> None:  # in the child, before exec: the protocol's fixed descriptors
            # copies first: a pipe end may itself be fd 3 or 4, and dup2 onto itself would keep close-on-exec
            commands, replies = os.dup(commands_read), os.dup(replies_write)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self.process = subprocess.Popen(
            [self.executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
             f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=to_fds_3_and_4, close_fds=False)  # noqa: PLW1509 (only dup2 calls before exec)
        os.close(commands_read)
        os.close(replies_write)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self.commands, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events that arrive meanwhile are kept)."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> dict[str, Any]:
        """The first event `method` of `session`, received or still to come."""
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(index)
            self.events.append(self._read())

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                raise BrowserError(f"Chromium did not answer within {self.timeout_s} s")
            chunk = os.read(self.replies, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited (status {self.process.poll()})")
            self.buffer += chunk
        frame, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(frame)

    def open(self, url: str, width: int, height: int = 900) -> Page:
        """A new tab with a `width` x `height` CSS-pixel viewport, `url` loaded (its load event fired)."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", session, width=width, height=height, deviceScaleFactor=1,
                  mobile=width < 600)
        self.call("Page.enable", session)
        self.call("Page.navigate", session, url=url)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session)


class Page:
    """A loaded tab: evaluate JavaScript in it and get the value back."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def evaluate(self, expression: str) -> Any:
        result = self.browser.call("Runtime.evaluate", self.session, expression=expression, returnByValue=True,
                                   awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")
