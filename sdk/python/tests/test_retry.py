"""What is retried and what is not, against a scripted server: a lost answer
to a create is retried with the same Idempotency-Key; 503 is retried for
idempotent calls only; a Retry-After longer than max_wait is raised."""
import http.server
import json
import threading
import time
import unittest

import qhronos


class Scripted:
    """Answers each request with the next step: (status, headers, body), or
    "drop" (the connection is cut before any answer)."""

    def __init__(self, steps):
        self.steps, self.seen, self.auth = list(steps), [], []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def handle_any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.seen.append((self.command, self.path, self.headers.get("Idempotency-Key"), body))
                outer.auth.append(self.headers.get("Authorization"))
                step = outer.steps.pop(0) if outer.steps else (200, {}, b'{"id":"e1"}')
                if step == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                status, headers, body = step
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = handle_any

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.client = qhronos.Client(self.base, token="t", backoff=0.005)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Retries(unittest.TestCase):
    def scripted(self, steps):
        s = Scripted(steps)
        self.addCleanup(s.close)
        return s

    def test_a_lost_create_answer_is_retried_with_the_same_key(self):
        s = self.scripted(["drop", (201, {}, b'{"id":"e1"}')])
        self.assertEqual(s.client.events.create(name="n", start_time="in 1 hour")["id"], "e1")
        self.assertEqual(len(s.seen), 2)
        self.assertRegex(s.seen[0][2], r"^qhronos-py-[0-9a-f]{32}$")
        self.assertEqual(s.seen[1][2], s.seen[0][2])

    def test_post_without_key_not_retried_get_is(self):
        s = self.scripted(["drop", (503, {}, b'{"error":"x"}'), (503, {}, b'{"error":"x"}'), (200, {}, b"[]")])
        with self.assertRaises(OSError):
            s.client.occurrences.replay("o1")
        with self.assertRaises(qhronos.UnavailableError):
            s.client.occurrences.replay("o1")
        self.assertEqual(s.client.events.list().items, [])
        self.assertEqual(len(s.seen), 4, "one attempt per POST, two for the GET")

    def test_backfill_is_retried_on_503_and_sends_datetimes_as_rfc3339(self):
        from datetime import datetime

        s = self.scripted([(503, {}, b'{"error":"x"}'),
                           (202, {}, b'{"event_id":"e1","instants":2,"created":0,"skipped":0,"existing":2}')])
        res = s.client.events.backfill("e1", datetime(2020, 1, 2, 9), "7 days ago")
        self.assertEqual(res["existing"], 2)
        self.assertEqual(len(s.seen), 2, "a repeat leaves it as it was: one retry after the 503")
        method, path, key, body = s.seen[1]
        self.assertEqual((method, path, key), ("POST", "/events/e1/backfill", None))
        self.assertEqual(json.loads(body), {"from": "2020-01-02T09:00:00Z", "to": "7 days ago",
                                            "respect_exceptions": True})

    def test_a_runs_complete_is_retried_on_503_with_the_run_token_as_its_bearer(self):
        s = self.scripted([(503, {}, b'{"error":"x"}'), (200, {}, b'{"id":"o1","status":"completed"}'),
                           (200, {}, b'{"id":"o1","status":"running"}')])
        run = qhronos.DeliveryRun({"token": "qrun_abc", "complete_url": f"{s.base}/occurrences/o1/complete",
                                   "heartbeat_url": f"{s.base}/occurrences/o1/heartbeat",
                                   "deadline": "2030-01-01T00:00:00Z"}, backoff=0.005)
        self.assertEqual(run.complete("succeeded", {"rows": 3})["status"], "completed")
        self.assertEqual(len(s.seen), 2, "a repeat answers the same: one retry after the 503")
        method, path, key, body = s.seen[1]
        self.assertEqual((method, path, key, s.auth[1]), ("POST", "/occurrences/o1/complete", None, "Bearer qrun_abc"))
        self.assertEqual(json.loads(body), {"status": "succeeded", "output": {"rows": 3}})
        self.assertEqual(run.heartbeat()["status"], "running")
        self.assertEqual((s.seen[2][1], s.seen[2][3], s.auth[2]), ("/occurrences/o1/heartbeat", b"", "Bearer qrun_abc"))

    def test_429_waits_for_retry_after_and_a_longer_one_is_raised(self):
        s = self.scripted([(429, {"Retry-After": "1"}, b"{}"), (200, {}, b"{}"), (429, {"Retry-After": "120"}, b"{}")])
        t0 = time.monotonic()
        s.client.occurrences.replay("o1")
        self.assertGreaterEqual(time.monotonic() - t0, 0.9, "waited for Retry-After")
        with self.assertRaises(qhronos.RateLimitError) as cm:
            s.client.occurrences.replay("o1")
        self.assertEqual(cm.exception.retry_after, 120)
        self.assertEqual(len(s.seen), 3)

    def test_query_encoding(self):
        from datetime import datetime, timezone

        from qhronos._transport import encode_query
        q = encode_query({"tags": ["a", "b"], "from_": datetime(2030, 1, 2, 9, tzinfo=timezone.utc),
                          "archived": False, "cursor": None})
        self.assertEqual(q, "?tags=a&tags=b&from=2030-01-02T09%3A00%3A00Z&archived=false")


if __name__ == "__main__":
    unittest.main()
