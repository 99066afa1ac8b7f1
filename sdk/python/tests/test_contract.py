"""The client agrees with internal/api/openapi.json: qhronos/types.py is what
gen_types.py makes of the document today, every operation of the document is
called by some method, and every request the client sends names a route,
parameters and a body the document has. A route added to the document
without a method here, or a stale types.py, fails."""
import ast
import http.server
import importlib.util
import json
import re
import threading
import unittest
import urllib.parse
from datetime import datetime, timedelta, timezone
from pathlib import Path

import qhronos

from .harness import REPO_ROOT

PACKAGE = Path(__file__).resolve().parents[1]
DOCUMENT = json.loads((REPO_ROOT / "internal" / "api" / "openapi.json").read_text(encoding="utf-8"))
METHODS = ("get", "post", "put", "patch", "delete")


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_types", PACKAGE / "gen_types.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Contract(unittest.TestCase):
    def test_types_are_generated_from_the_document(self):
        want = load_generator().generate(DOCUMENT)
        got = (PACKAGE / "qhronos" / "types.py").read_text(encoding="utf-8")
        self.assertTrue(got == want, "qhronos/types.py is stale: run `python3 sdk/python/gen_types.py` (or `sdk/generate.sh`)")
        for name in DOCUMENT["components"]["schemas"]:
            self.assertTrue(hasattr(qhronos.types, name), name)

    def test_the_package_is_python_3_9(self):
        for f in sorted((PACKAGE / "qhronos").glob("*.py")):
            ast.parse(f.read_text(encoding="utf-8"), filename=str(f), feature_version=(3, 9))
        self.assertTrue((PACKAGE / "qhronos" / "py.typed").exists())

    def test_every_operation_is_called_with_a_request_the_document_allows(self):
        routes = []
        for path, item in DOCUMENT["paths"].items():
            for m in METHODS:
                if m in item:
                    op = item[m]
                    params = item.get("parameters", []) + op.get("parameters", [])
                    routes.append({"key": f"{m.upper()} {path}", "method": m.upper(), "op": op, "params": params,
                                   "re": re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"),
                                   "literal": len(re.sub(r"\{[^}]+\}", "", path))})
        routes.sort(key=lambda r: -r["literal"])
        hit, problems = set(), []

        class Handler(http.server.BaseHTTPRequestHandler):
            def handle_any(self):
                u = urllib.parse.urlsplit(self.path)
                if self.headers.get("Upgrade", "").lower() == "websocket":
                    hit.add("GET /ws" if u.path == "/ws" else f"GET {u.path}")
                    self.send_response(400)
                    self.end_headers()
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                route = next((r for r in routes if r["method"] == self.command and r["re"].match(u.path)), None)
                if route is None:
                    problems.append(f"{self.command} {u.path} is not in the document")
                    self.send_response(404)
                    self.end_headers()
                    return
                hit.add(route["key"])
                allowed = {p["name"] for p in route["params"] if p["in"] == "query"}
                for name, _ in urllib.parse.parse_qsl(u.query):
                    if name not in allowed:
                        problems.append(f"{route['key']}: query parameter {name} is not in the document")
                headers = {p["name"].lower() for p in route["params"] if p["in"] == "header"}
                for h in ("idempotency-key", "if-match", "x-qhronos-via"):
                    if self.headers.get(h) and h not in headers:
                        problems.append(f"{route['key']}: header {h} is not in the document")
                op = route["op"]
                if body and "requestBody" not in op:
                    problems.append(f"{route['key']}: sends a body the document does not take")
                if not body and op.get("requestBody", {}).get("required"):
                    problems.append(f"{route['key']}: the document requires a body")
                code = sorted(c for c in op["responses"] if c.startswith("2"))[0]
                content = op["responses"][code].get("content", {})
                schema = content.get("application/json", {}).get("schema", {})
                if "$ref" in schema:
                    schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
                out = b"text" if "text/plain" in content else b"[]" if schema.get("type") == "array" else b"{}"
                self.send_response(int(code))
                self.end_headers()
                if code != "204":
                    self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

            def log_message(self, *args):
                pass

        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self.addCleanup(httpd.server_close)
        self.addCleanup(httpd.shutdown)
        q = qhronos.Client(f"http://127.0.0.1:{httpd.server_address[1]}", token="t", retries=0)
        i = "0b7f6a43-2a35-4d43-9a47-51cbbd1d6d83"
        soon = datetime.now(timezone.utc) + timedelta(hours=1)

        q.health(); q.healthz(); q.ready(); q.status(); q.openapi(); q.metrics()  # noqa: E702
        q.stats(since=soon, by_action=True)
        q.stats_timeline(since=soon, step="1h")
        q.punctuality(group_by="tag", tag=["a", "b"], tolerance="250ms")
        with self.assertRaises(qhronos.HandshakeError):
            q.subscribe(client_name="acme")
        q.events.create(name="n", start_time="in 1 hour", webhook="https://example.com/h", via="test")
        # The stub answers {}: no result for the one event sent is an error.
        with self.assertRaisesRegex(ValueError, "0 results for 1 events"):
            q.events.create_many([{"name": "n", "start_time": "in 1 hour", "webhook": "https://example.com/h"}],
                                 idempotency_key="k")
        q.events.list(tags=["a", "b"], tags_all=["c"], status="active", from_=soon, limit=10, cursor="x")
        q.events.get(i)
        q.events.get(i, include_deleted=True)
        q.events.get_with_etag(i)
        q.events.update(i, description="d", if_match='"3"')
        q.events.delete(i, if_match='"3"')
        q.events.upsert("cart-42", name="cart reminder", start_time="in 1 hour", webhook="https://example.com/h",
                        debounce="10m", max_wait="1h")
        q.events.delete_by_key("cart-42")
        q.events.pause(i)
        q.events.pause(i, until=soon, reason="deploy", catch_up="skip")
        q.events.resume(i, catch_up="fire")
        q.events.trigger(i, idempotency_key="k1")
        q.events.backfill(i, soon - timedelta(days=2), "1 hour ago", respect_exceptions=False)
        q.events.rotate_secret(i, grace="1h")
        q.events.occurrences(i, status="completed", order="scheduled_at", limit=2)
        list(q.events.all_occurrences(i))
        q.events.preview(i, count=3, after=soon)
        q.events.history(i, include_deleted=True, limit=5, cursor="x")
        list(q.events.all_history(i))
        q.events.exceptions(i)
        q.events.add_exception(i, at=soon, action="skip")
        q.events.delete_exception(i, soon)
        q.schedules.preview(rrule="FREQ=DAILY", count=2)
        q.occurrences.list(event_id=i, archived=False, order="-scheduled_at", page=2)
        list(q.occurrences.all(event_id=i))
        q.occurrences.get(i)
        q.occurrences.attempts(i)
        q.occurrences.replay(i)
        q.occurrences.replay_matching(status="failed", limit=10)
        q.occurrences.skip(i, reason="holiday")
        q.occurrences.unskip(i)
        q.occurrences.move(i, soon)
        q.occurrences.complete(i, "succeeded", output={"rows": 1})
        q.occurrences.heartbeat(i)
        q.occurrences.deliveries(i, limit=5, cursor="x")
        list(q.occurrences.all_deliveries(i))
        q.occurrences.replay_delivery(i, i)
        q.events.create(name="n", start_time="in 1 hour", topic="digest.daily", metadata={"region": "eu"})
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        run = qhronos.DeliveryRun({"token": "qrun_x", "complete_url": f"{base}/occurrences/{i}/complete",
                                   "heartbeat_url": f"{base}/occurrences/{i}/heartbeat", "deadline": soon.isoformat()},
                                  retries=0)
        run.complete("failed")
        run.heartbeat()
        q.events.create(name="n", start_time="in 1 hour", webhook="https://example.com/h",
                        concurrency={"key": "customer-42", "limit": 2}, overlap="skip")
        q.events.update(i, concurrency=None)
        q.concurrency_keys.list(limit=10, cursor="x")
        list(q.concurrency_keys.all())
        q.concurrency_keys.get("tenant:42@eu")
        q.concurrency_keys.pause("customer-42")
        q.concurrency_keys.resume("customer-42")
        q.calendars.create(name="holidays")
        q.calendars.list(tags=["a"])
        list(q.calendars.all())
        q.calendars.get(i)
        q.calendars.update(i, name="holidays", if_match='"1"')
        q.calendars.delete(i)
        q.endpoints.create(name="billing", url="https://example.com/h", rate_limit={"per_second": 5})
        q.endpoints.list(tags=["a"], state="open")
        list(q.endpoints.all())
        q.endpoints.get(i)
        q.endpoints.update(i, name="b", if_match='"1"')
        q.endpoints.update(i, rate_limit=None)
        q.endpoints.delete(i)
        q.endpoints.enable(i)
        q.endpoints.disable(i)
        q.endpoints.rotate_secret(i, grace="1h")
        q.endpoints.test(i)
        q.endpoints.circuit_history(i, limit=5, cursor="x")
        list(q.endpoints.all_circuit_history(i))
        q.topics.create(name="digest.daily", description="d", schema={"type": "object"})
        q.topics.list(limit=5, cursor="x")
        list(q.topics.all())
        q.topics.get("digest.daily")
        q.topics.update("digest.daily", description="d", if_match='"1"')
        q.topics.update("digest.daily", schema=None)
        q.topics.delete("digest.daily", if_match='"1"')
        q.portal_links.create(tags=["customer-42"], expires_in="1h", return_url="https://app.example.com/settings")
        q.portal_links.redeem("qpl_x")
        q.subscriptions.create(topic="digest.*", endpoint_id=i, filter='tags.exists(t, t == "a")', description="d",
                               tags=["a"], paused=False)
        q.subscriptions.list(topic="digest.*", endpoint_id=i, paused=False, tags=["a", "b"], tags_all="c", limit=5,
                             cursor="x")
        list(q.subscriptions.all(topic="digest.*"))
        q.subscriptions.get(i)
        q.subscriptions.update(i, paused=True, if_match='"1"')
        q.subscriptions.update(i, {"filter": None, "description": None})
        q.subscriptions.pause(i)
        q.subscriptions.resume(i)
        q.subscriptions.deliveries(i, limit=5, cursor="x")
        list(q.subscriptions.all_deliveries(i))
        q.subscriptions.delete(i, if_match='"1"')
        q.tokens.create(sub="ci", access="read", expires_at=soon, scope=["a"])
        q.tokens.list()
        q.tokens.revoke("tok")
        q.notification_channels.create(name="ops", type="webhook", url="https://example.com/n")
        q.notification_channels.list()
        q.notification_channels.get(i)
        q.notification_channels.update(i, name="ops")
        q.notification_channels.delete(i)
        q.notification_channels.test(i)
        q.notification_channels.notices(i, limit=5, cursor="x")

        self.assertEqual(problems, [])
        missing = sorted(r["key"] for r in routes if r["key"] not in hit)
        self.assertEqual(missing, [], "operations of openapi.json the client never calls: add a method to qhronos/client.py")


if __name__ == "__main__":
    unittest.main()
