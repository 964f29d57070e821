"""A small WebDriver BiDi client for headless Firefox, enough for serve_browser.py.

Why not Selenium: it drives Firefox through geckodriver, which Debian does not package (and
Python's package index is out of reach); Firefox itself speaks WebDriver BiDi
(https://w3c.github.io/webdriver-bidi/) on --remote-debugging-port, and python3-websocket is
in Debian. Only the commands the page test needs: session.new, browsingContext.getTree and
navigate, script.callFunction, input.performActions."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from typing import Any, Dict, List, Optional

import websocket  # Debian's python3-websocket

# WebDriver's key codes (https://w3c.github.io/webdriver/#keyboard-actions).
CONTROL = "\ue009"
ENTER = "\ue007"


class BidiError(RuntimeError):
    pass


def _value(remote: Dict[str, Any]) -> Any:
    """A primitive from its BiDi serialization; nodes stay as their reference."""
    kind = remote.get("type")
    if kind in ("undefined", "null"):
        return None
    if kind == "node":
        return {"sharedId": remote["sharedId"]}
    if kind == "array":
        return [_value(item) for item in remote.get("value", [])]
    return remote.get("value")


class Firefox:
    """A headless Firefox with a fresh profile, and one browsing context."""

    def __init__(self, timeout: float = 60.0) -> None:
        binary = shutil.which("firefox-esr") or shutil.which("firefox")
        if not binary:
            raise BidiError("no firefox-esr or firefox on PATH (apt-get install firefox-esr)")
        self._profile = tempfile.TemporaryDirectory(prefix="csan-firefox-")
        # Port 0: Firefox picks a free port and says which on stderr.
        self._process = subprocess.Popen(
            [binary, "--headless", "--no-remote", "--profile", self._profile.name, "--remote-debugging-port=0",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = self._listening_url(timeout)
        # Firefox refuses a handshake whose Origin header names a web page.
        self._socket = websocket.create_connection(url + "/session", timeout=timeout, suppress_origin=True)
        self._next_id = 0
        self.command("session.new", capabilities={})
        self.context = self.command("browsingContext.getTree")["contexts"][0]["context"]

    def _listening_url(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        assert self._process.stderr is not None
        while time.monotonic() < deadline:
            line = self._process.stderr.readline()
            if not line and self._process.poll() is not None:
                break
            found = re.search(r"WebDriver BiDi listening on (ws://\S+)", line)
            if found:
                return found.group(1)
        self.quit()
        raise BidiError("firefox did not start its WebDriver BiDi server")

    def command(self, method: str, **params: Any) -> Dict[str, Any]:
        self._next_id += 1
        self._socket.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:  # events (none subscribed) and answers share the socket
            message = json.loads(self._socket.recv())
            if message.get("id") != self._next_id:
                continue
            if message.get("type") == "error":
                raise BidiError(f"{method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def navigate(self, url: str) -> None:
        self.command("browsingContext.navigate", context=self.context, url=url, wait="complete")

    def call(self, function: str, *arguments: Any) -> Any:
        """Runs a JavaScript function in the page with string/number arguments; returns its value."""
        result = self.command(
            "script.callFunction", functionDeclaration=function, awaitPromise=False, resultOwnership="root",
            target={"context": self.context},
            arguments=[{"type": "string" if isinstance(a, str) else "number", "value": a} for a in arguments])
        if result["type"] == "exception":
            raise BidiError(result["exceptionDetails"].get("text", "a script failed"))
        return _value(result["result"])

    def perform(self, actions: List[Dict[str, Any]]) -> None:
        self.command("input.performActions", context=self.context, actions=actions)
        self.command("input.releaseActions", context=self.context)

    def click(self, element: Dict[str, str]) -> None:
        """A mouse click at the element's centre."""
        self.perform([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
            {"type": "pointerMove", "x": 0, "y": 0, "origin": {"type": "element", "element": element}},
            {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}])

    def keys(self, text: str, held: Optional[str] = None) -> None:
        """Types `text` into the focused element, with `held` (e.g. CONTROL) pressed throughout."""
        actions: List[Dict[str, str]] = []
        if held:
            actions.append({"type": "keyDown", "value": held})
        for key in text:
            actions += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        if held:
            actions.append({"type": "keyUp", "value": held})
        self.perform([{"type": "key", "id": "keyboard", "actions": actions}])

    def quit(self) -> None:
        try:
            if getattr(self, "_socket", None):
                self._socket.close()
        finally:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._profile.cleanup()
