"""Runs the real qhronosd for the tests: built from this checkout (or
QHRONOS_BIN), on a free loopback port, with the embedded SQLite store in a
temporary directory, or on PostgreSQL + Redis when QHRONOS_SDK_DATABASE_URL
(and QHRONOS_SDK_REDIS_URL, QHRONOS_SDK_REDIS_PREFIX) name an isolated
database and key prefix. One server per test process, stopped at exit."""
import atexit
import http.server
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


def wait_for(what, cond, timeout=60.0):
    """Polls cond until it returns something truthy, or fails after timeout."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="qhronos-sdk-py-")
        binary = os.environ.get("QHRONOS_BIN")
        if not binary:
            binary = os.path.join(self.dir, "qhronosd")
            subprocess.run(["go", "build", "-o", binary, "./cmd/qhronosd"], cwd=REPO_ROOT, check=True)
        addr = f"127.0.0.1:{free_port()}"
        data_dir = os.path.join(self.dir, "data")
        env = {
            "PATH": os.environ.get("PATH", ""), "HOME": self.dir,
            "QHRONOS_SERVER_ADDR": addr, "QHRONOS_SERVER_DATA_DIR": data_dir,
            "QHRONOS_SCHEDULER_MAX_SLEEP": "100ms", "QHRONOS_SCHEDULER_DRAIN_TIMEOUT": "3s",
            "QHRONOS_ACTIONS_ATTEMPT_TIMEOUT": "3s", "QHRONOS_RETRY_INITIAL_BACKOFF": "1s",
            "QHRONOS_RETRY_MAX_BACKOFF": "1s", "QHRONOS_SERVER_SHUTDOWN_TIMEOUT": "2s",
            "QHRONOS_ARCHIVAL_ENABLED": "false", "QHRONOS_LOG_LEVEL": "warn",
            # JWT principals (not the master token) get a small bucket, so the
            # 429 test meets the limit within a few calls.
            "QHRONOS_RATELIMIT_RATE": "2", "QHRONOS_RATELIMIT_BURST": "3",
        }
        self.backend = "postgres" if os.environ.get("QHRONOS_SDK_DATABASE_URL") else "sqlite"
        if self.backend == "postgres":
            # Production mode: the secrets must be given, and loopback receivers allowed.
            env.update({
                "QHRONOS_DATABASE_URL": os.environ["QHRONOS_SDK_DATABASE_URL"],
                "QHRONOS_AUTH_MASTER_TOKEN": secrets.token_hex(32), "QHRONOS_AUTH_JWT_SECRET": secrets.token_hex(32),
                "QHRONOS_HMAC_DEFAULT_SECRET": secrets.token_hex(32),
                "QHRONOS_SECRETS_ENCRYPTION_KEY": secrets.token_hex(32),
                "QHRONOS_OUTBOUND_ALLOW_CIDRS": "127.0.0.0/8",
            })
            if os.environ.get("QHRONOS_SDK_REDIS_URL"):
                env["QHRONOS_REDIS_URL"] = os.environ["QHRONOS_SDK_REDIS_URL"]
                env["QHRONOS_REDIS_PREFIX"] = os.environ.get("QHRONOS_SDK_REDIS_PREFIX") or f"sdk-py-{secrets.token_hex(4)}:"
        self.log = open(os.path.join(self.dir, "qhronosd.log"), "wb")
        self.proc = subprocess.Popen([binary, "serve"], cwd=self.dir, env=env, stdout=self.log, stderr=self.log)
        self.url = f"http://{addr}"

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"qhronosd exited:\n{self.output()}")
            try:
                with urllib.request.urlopen(self.url + "/ready", timeout=1) as r:
                    return r.status == 200
            except OSError:
                return False

        try:
            wait_for("qhronosd /ready", ready)
        except BaseException:
            self.stop()
            raise
        if self.backend == "sqlite":
            # The embedded default writes its generated secrets to secrets.json.
            with open(os.path.join(data_dir, "secrets.json")) as f:
                s = json.load(f)
            self.token, self.default_secret = s["master_token"], s["hmac_default_secret"]
        else:
            self.token, self.default_secret = env["QHRONOS_AUTH_MASTER_TOKEN"], env["QHRONOS_HMAC_DEFAULT_SECRET"]

    def output(self):
        with open(os.path.join(self.dir, "qhronosd.log"), "rb") as f:
            return f.read().decode("utf-8", "replace")[-6000:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_server = None
_lock = threading.Lock()


def server():
    """The test process's server, started on first use."""
    global _server
    with _lock:
        if _server is None:
            _server = Server()
            atexit.register(_server.stop)
        return _server


class Receiver:
    """A loopback webhook receiver keeping every request with its raw body;
    answer(request) gives the status (default 200)."""

    def __init__(self, answer=lambda request: 200):
        self.requests = []
        received = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = {"headers": dict(self.headers.items()), "raw_headers": self.headers, "body": body}
                received.append(request)
                self.send_response(answer(request))
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def next(self, n):
        """Waits for the n-th request (1-based)."""
        return wait_for(f"delivery #{n}", lambda: len(self.requests) >= n and self.requests[n - 1])

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
