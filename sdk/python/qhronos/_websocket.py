"""/ws: live deliveries over a WebSocket.

The standard library has no WebSocket client, and the package takes no
dependencies, so this is the small part of RFC 6455 a subscriber needs:
the opening handshake, masked text frames out, text/ping/close frames in.
"""
import base64
import hashlib
import json
import os
import socket
import ssl
import struct
import threading
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional

from .errors import QhronosError

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class HandshakeError(QhronosError):
    """The server refused the subscription (bad token, client name or tags)."""


class Connection:
    """A subscribed /ws connection: iterate it for frames (dicts with
    "type": "event", "ack" or "error"), ack occurrences, close it."""

    def __init__(self, sock: socket.socket, buffered: bytes):
        self._sock = sock
        self._buf = buffered
        self._send_lock = threading.Lock()
        self.closed = False

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        while True:
            f = self.next()
            if f is None:
                return
            yield f

    def next(self, timeout: Optional[float] = None) -> Optional[Dict[str, Any]]:
        """The next frame, or None once the server closed the connection."""
        self._sock.settimeout(timeout)
        while True:
            op, payload = self._read_frame()
            if op is None or op == 0x8:
                self.close()
                return None
            if op == 0x9:
                self._write_frame(0xA, payload)
            elif op == 0x1:
                return json.loads(payload.decode("utf-8"))

    def ack(self, event_id: str, occurrence_id: str) -> None:
        """Acknowledges an occurrence of an event created with require_ack."""
        self.send({"type": "ack", "event_id": event_id, "occurrence_id": occurrence_id})

    def send(self, frame: Dict[str, Any]) -> None:
        self._write_frame(0x1, json.dumps(frame).encode())

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._write_frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        self._sock.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _read(self, n: int) -> Optional[bytes]:
        while len(self._buf) < n:
            chunk = self._sock.recv(65536)
            if not chunk:
                return None
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _read_frame(self):
        message, first = b"", 0x1
        while True:
            head = self._read(2)
            if head is None:
                return None, b""
            fin, op, n = head[0] & 0x80, head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2) or b"\0\0")[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8) or b"\0" * 8)[0]
            if n > 16 << 20:
                raise QhronosError("websocket frame too large")
            payload = self._read(n) if n else b""
            if payload is None:
                return None, b""
            if op >= 0x8:  # control frames come whole, even between fragments
                return op, payload
            message += payload
            if op != 0:
                first = op
            if fin:
                return first, message

    def _write_frame(self, op: int, payload: bytes) -> None:
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | op, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x80 | op, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | op, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self._send_lock:
            self._sock.sendall(head + mask + masked)


def subscribe(base_url: str, token: Optional[str], client_name: Optional[str], tags: Optional[List[str]],
              timeout: float = 30.0) -> Connection:
    """Connects to base_url's /ws and subscribes; returns once the server
    registered the subscription."""
    if bool(client_name) == bool(tags):
        raise ValueError("subscription: give either client_name or tags")
    u = urllib.parse.urlsplit(base_url)
    port = u.port or (443 if u.scheme == "https" else 80)
    sock: socket.socket = socket.create_connection((u.hostname, port), timeout=timeout)
    try:
        if u.scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=u.hostname)
        key = base64.b64encode(os.urandom(16)).decode()
        path = u.path.rstrip("/") + "/ws"
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      "User-Agent: qhronos-python\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                raise HandshakeError("connection closed during the upgrade")
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if " 101 " not in lines[0] + " ":
            raise HandshakeError(f"websocket upgrade refused: {lines[0]}")
        fields = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        want = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
        if fields.get("sec-websocket-accept") != want:
            raise HandshakeError("websocket upgrade: wrong Sec-WebSocket-Accept")
        conn = Connection(sock, rest)
        hs: Dict[str, Any] = {"token": token}
        if client_name:
            hs.update(type="client-hook", client_name=client_name)
        else:
            hs.update(type="tag-listener", tags=list(tags or []))
        conn.send(hs)
        answer = conn.next(timeout)
        if answer is None or answer.get("type") != "ack":
            conn.close()
            raise HandshakeError((answer or {}).get("message") or "closed before the handshake answer")
        return conn
    except BaseException:
        sock.close()
        raise
