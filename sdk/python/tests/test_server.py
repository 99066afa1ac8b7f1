"""The client and verify_delivery against the real qhronosd (see harness.py)."""
import http.server
import json
import os
import re
import secrets
import threading
import time
import unittest
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import qhronos

from .harness import REPO_ROOT, Receiver, server, wait_for


def tag_of(prefix):
    return f"{prefix}-{secrets.token_hex(4)}"


def in_an_hour():
    return (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()


def parse(ts):
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def to_the_second(ts):
    """An RFC 3339 instant with its fraction (up to nine digits, which
    fromisoformat takes only from Python 3.11) dropped."""
    return parse(re.sub(r"\.\d+", "", ts))


class RunReceiver:
    """A receiver of callback deliveries: verifies each with the kit and
    answers 202 at once, keeping the verified delivery and its
    Qhronos-Run-Token header; the work comes later."""

    def __init__(self, secret):
        self.got = []
        got = self.got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    delivery = qhronos.verify_delivery(self.headers, body, secret)
                except qhronos.WebhookVerificationError:
                    self.send_response(401)
                else:
                    got.append((delivery, self.headers.get("Qhronos-Run-Token")))
                    self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/jobs"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class AgainstServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()
        cls.q = qhronos.Client(cls.srv.url, token=cls.srv.token)
        cls.receiver = Receiver()

    @classmethod
    def tearDownClass(cls):
        cls.receiver.close()

    def trigger_and_receive(self, event_id):
        n = len(self.receiver.requests)
        occ = self.q.events.trigger(event_id)
        return occ, self.receiver.next(n + 1)

    def test_events_lifecycle(self):
        q, tag = self.q, tag_of("life")
        ev = q.events.create(name="standup", start_time="in 1 hour", rrule="FREQ=DAILY",
                             webhook="https://example.com/hook", tags=[tag], metadata={"team": "core"})
        self.assertRegex(ev["id"], r"^[0-9a-f-]{36}$")
        self.assertEqual(ev["status"], "active")
        self.assertEqual(ev["metadata"], {"team": "core"})
        self.assertEqual(q.events.get(ev["id"])["name"], "standup")
        page = q.events.list(tags=[tag])
        self.assertEqual([e["id"] for e in page.items], [ev["id"]])
        self.assertEqual(page.next_cursor, "")

        _, etag = q.events.get_with_etag(ev["id"])
        self.assertTrue(etag)
        self.assertEqual(q.events.update(ev["id"], description="daily", if_match=etag)["description"], "daily")
        with self.assertRaises(qhronos.PreconditionFailedError):
            q.events.update(ev["id"], {"description": "stale"}, if_match=etag)

        paused = q.events.pause(ev["id"], reason="holiday")
        self.assertEqual((paused["status"], paused["pause_reason"]), ("paused", "holiday"))
        self.assertEqual(q.events.resume(ev["id"])["status"], "active")
        self.assertEqual(len(q.events.preview(ev["id"], count=3)["instants"]), 3)
        self.assertEqual(len(q.schedules.preview(rrule="FREQ=HOURLY", start_time="in 1 hour", count=2)["instants"]), 2)
        history = list(q.events.all_history(ev["id"], limit=1))
        self.assertGreaterEqual(len(history), 4, "create, update, pause, resume")

        q.events.delete(ev["id"])
        with self.assertRaises(qhronos.NotFoundError):
            q.events.get(ev["id"])
        self.assertEqual(q.events.get(ev["id"], include_deleted=True)["status"], "deleted")

    def test_idempotency_key_replays_the_first_create(self):
        key = f"k-{secrets.token_hex(8)}"
        body = {"name": "once", "start_time": in_an_hour(), "webhook": "https://example.com/h"}
        a = self.q.events.create(body, idempotency_key=key)
        b = self.q.events.create(body, idempotency_key=key)
        self.assertEqual(a["id"], b["id"])

    def test_create_many_chunks_and_answers_each_event(self):
        q, tag, start = self.q, tag_of("batch"), in_an_hour()
        events = [{"name": f"bulk {i}", "start_time": start, "webhook": "https://example.com/h", "tags": [tag]}
                  for i in range(1205)]
        events[1100]["start_time"] = "2001-01-01T00:00:00Z"
        key = f"bulk-{secrets.token_hex(8)}"
        results = q.events.create_many(events, idempotency_key=key)
        self.assertEqual([r["index"] for r in results], list(range(1205)))
        self.assertEqual(results[1100]["status"], 400)
        self.assertEqual(results[1100]["field"], "start_time")
        self.assertEqual(sum(r["status"] == 201 for r in results), 1204)
        self.assertEqual(results[1204]["event"]["name"], "bulk 1204")
        again = q.events.create_many(events, idempotency_key=key)
        self.assertEqual([r.get("event", {}).get("id") for r in again], [r.get("event", {}).get("id") for r in results])
        self.assertEqual(len(list(q.events.all(tags=[tag], limit=500))), 1204)

    def test_errors(self):
        q = self.q
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.events.create(name="past", start_time="2001-01-01T00:00:00Z", webhook="https://example.com/h")
        self.assertIsInstance(cm.exception, qhronos.APIError)
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "start_time"))
        with self.assertRaises(qhronos.NotFoundError) as nf:
            q.events.get("6f1c1d4e-9a0b-4c1e-8f00-000000000000")
        self.assertEqual(nf.exception.status, 404)
        with self.assertRaises(qhronos.UnauthorizedError):
            qhronos.Client(self.srv.url, token="not-a-token").events.list()
        cal = q.calendars.create(name="in use", dates=["2031-12-25"])
        q.events.create(name="uses", start_time=in_an_hour(), webhook="https://example.com/h", calendars=[{"id": cal["id"]}])
        with self.assertRaises(qhronos.ConflictError) as cf:
            q.calendars.delete(cal["id"])
        self.assertEqual(cf.exception.status, 409)

    def test_rate_limit_is_honoured(self):
        minted = self.q.tokens.create(sub="sdk-py", access="read", expires_at=in_an_hour())
        reader = qhronos.Client(self.srv.url, token=minted["token"], retries=20)
        limited = []
        send = reader._t._once

        def counting(*a, **kw):
            try:
                return send(*a, **kw)
            except qhronos.RateLimitError as e:
                limited.append(e)
                raise

        reader._t._once = counting
        # Eight calls at once against a bucket of 3 refilled at 2/s: some are
        # refused, wait for Retry-After and succeed.
        with ThreadPoolExecutor(8) as pool:
            pages = list(pool.map(lambda _: reader.events.list(limit=1), range(8)))
        self.assertEqual(len(pages), 8)
        self.assertTrue(limited, "some of 8 simultaneous calls met the limit")

        impatient = qhronos.Client(self.srv.url, token=minted["token"], retries=0)

        def call(_):
            try:
                impatient.events.list(limit=1)
            except qhronos.RateLimitError as e:
                return e
            return None

        with ThreadPoolExecutor(8) as pool:
            err = next((e for e in pool.map(call, range(8)) if e is not None), None)
        self.assertIsNotNone(err)
        self.assertEqual(err.status, 429)
        self.assertGreaterEqual(err.retry_after, 1)

    def test_cancel_stops_a_wait_between_retries(self):
        minted = self.q.tokens.create(sub="sdk-py-cancel", access="read", expires_at=in_an_hour())
        waiting = qhronos.Client(self.srv.url, token=minted["token"], retries=100)
        cancel = threading.Event()
        calls, failure = [], []

        def run():
            try:
                while True:
                    waiting.events.list(limit=1, cancel=cancel)
                    calls.append(1)
            except Exception as e:  # noqa: BLE001 - the test inspects it
                failure.append(e)

        th = threading.Thread(target=run)
        th.start()
        wait_for("a few calls", lambda: len(calls) >= 4)
        cancel.set()
        th.join(60)
        self.assertFalse(th.is_alive())
        self.assertIsInstance(failure[0], qhronos.Cancelled)

    def test_cursor_iteration_over_1000_events(self):
        q, tag, start = self.q, tag_of("many"), in_an_hour()

        def create(_):
            return q.events.create(name="page", start_time=start, webhook="https://example.com/h", tags=[tag])["id"]

        with ThreadPoolExecutor(8) as pool:
            ids = set(pool.map(create, range(1000)))
        self.assertEqual(len(ids), 1000)
        first = q.events.list(tags=[tag], limit=100)
        self.assertEqual(len(first.items), 100)
        self.assertTrue(first.next_cursor)
        seen = [e["id"] for e in q.events.all(tags=[tag], limit=100)]
        self.assertEqual(len(seen), 1000)
        self.assertEqual(set(seen), ids)
        occ = [o["id"] for o in q.occurrences.all(tags=[tag], limit=250)]
        self.assertEqual(len(occ), 1000)
        self.assertEqual(len(set(occ)), 1000, "no occurrence twice")

    def test_occurrences_skip_move_exceptions_attempts_replay(self):
        q = self.q
        now = time.time()
        start = datetime.fromtimestamp((int(now // 3600) + 3) * 3600, timezone.utc)  # whole hours
        ev = q.events.create(name="hourly", start_time=start, rrule="FREQ=HOURLY", webhook=self.receiver.url)
        occs = wait_for("planned occurrences", lambda: (lambda p: len(p.items) >= 3 and p.items)(
            q.events.occurrences(ev["id"], status="pending", order="scheduled_at", limit=3)))
        self.assertEqual(q.occurrences.skip(occs[0]["id"], reason="holiday")["status"], "skipped")
        self.assertEqual(q.occurrences.unskip(occs[0]["id"])["status"], "pending")
        to = parse(occs[1]["scheduled_at"]) + timedelta(minutes=30)
        moved = q.occurrences.move(occs[1]["id"], to, reason="later")
        self.assertEqual(moved["id"], occs[1]["id"])
        self.assertEqual(parse(moved["scheduled_at"]), to)
        self.assertEqual(parse(moved["original_scheduled_at"]), parse(occs[1]["scheduled_at"]))

        far = parse(occs[0]["scheduled_at"]) + timedelta(days=100)
        q.events.add_exception(ev["id"], at=far, action="skip", reason="far away")
        is_far = lambda x: x["action"] == "skip" and parse(x["at"]) == far  # noqa: E731
        self.assertTrue(any(is_far(x) for x in q.events.exceptions(ev["id"])))
        q.events.delete_exception(ev["id"], far)
        self.assertFalse(any(is_far(x) for x in q.events.exceptions(ev["id"])))

        manual, _ = self.trigger_and_receive(ev["id"])
        done = wait_for("the manual occurrence completes",
                        lambda: (lambda o: o["status"] == "completed" and o)(q.occurrences.get(manual["id"])))
        self.assertEqual(done["status_code"], 200)
        attempts = q.occurrences.attempts(manual["id"])
        self.assertEqual([a["status_code"] for a in attempts], [200])
        self.assertEqual(q.occurrences.replay(manual["id"])["id"], manual["id"])
        wait_for("the replay's attempt", lambda: len(q.occurrences.attempts(manual["id"])) == 2)
        self.assertGreaterEqual(q.occurrences.list(event_id=ev["id"], page=1, limit=5)["pagination"]["total"], 3)
        self.assertEqual(q.occurrences.replay_matching(event_id=ev["id"], status="failed")["requeued"], 0)

    def test_backfill(self):
        q = self.q
        day = 86400
        start = datetime.fromtimestamp((int(time.time()) // day + 1) * day + 9 * 3600, timezone.utc)  # tomorrow 09:00

        def at(days):
            return start + timedelta(days=days)

        cal = q.calendars.create(name="backfill holiday", dates=[at(-3).date().isoformat()])

        def daily(name):
            return q.events.create(name=name, start_time=start, rrule="FREQ=DAILY", webhook=self.receiver.url,
                                   calendars=[{"id": cal["id"], "policy": "skip"}])

        ev = daily("daily")
        # datetimes, both ends included: -5, -4, -3 (the calendar's day, recorded skipped) and -2 days
        res = q.events.backfill(ev["id"], at(-5), at(-2))
        self.assertEqual({k: res[k] for k in ("event_id", "instants", "created", "skipped", "existing")},
                         {"event_id": ev["id"], "instants": 4, "created": 3, "skipped": 1, "existing": 0})
        self.assertEqual((parse(res["from"]), parse(res["to"])), (at(-5), at(-2)))

        def completed():
            mine = [o for o in q.events.occurrences(ev["id"], order="scheduled_at", limit=10).items
                    if o.get("reason") == "backfill"]
            return len(mine) == 3 and all(o["status"] == "completed" for o in mine) and mine

        fired = wait_for("the backfilled occurrences complete", completed)
        self.assertEqual([parse(o["scheduled_at"]) for o in fired], [at(-5), at(-4), at(-2)])

        # strings; a repeat creates nothing
        again = q.events.backfill(ev["id"], from_=at(-5).isoformat(), to=at(-2).isoformat())
        self.assertEqual([again[k] for k in ("instants", "created", "skipped", "existing")], [4, 0, 0, 4])

        every = q.events.backfill(daily("daily, every instant")["id"], at(-5), at(-2), respect_exceptions=False)
        self.assertEqual([every[k] for k in ("instants", "created", "skipped", "existing")], [4, 4, 0, 0])

        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.events.backfill(ev["id"], at(-5), datetime.now(timezone.utc) + timedelta(hours=1))
        self.assertEqual(cm.exception.field, "to")
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.events.backfill(ev["id"], at(-2), at(-5))
        self.assertEqual(cm.exception.field, "from")
        once = q.events.create(name="once", start_time=in_an_hour(), webhook="https://example.com/h")
        with self.assertRaises(qhronos.ConflictError) as cf:
            q.events.backfill(once["id"], at(-5), at(-2))
        self.assertEqual(cf.exception.status, 409)
        q.events.pause(ev["id"])
        with self.assertRaises(qhronos.ConflictError):
            q.events.backfill(ev["id"], at(-5), at(-2))
        with self.assertRaises(qhronos.NotFoundError):
            q.events.backfill("6f1c1d4e-9a0b-4c1e-8f00-000000000000", at(-5), at(-2))

    def run_receiver(self):
        secret = f"run-{secrets.token_hex(8)}"
        r = RunReceiver(secret)
        self.addCleanup(r.close)
        return r, secret

    def wait_running(self, occurrence_id):
        wait_for(f"occurrence {occurrence_id} running",
                 lambda: self.q.occurrences.get(occurrence_id)["status"] == "running")

    def test_callback_run_completed_with_the_run_token_alone(self):
        q = self.q
        r, secret = self.run_receiver()
        ev = q.events.create(name="nightly export", start_time=in_an_hour(), webhook=r.url, hmac_secret=secret,
                             completion="callback", max_runtime="30m")
        self.assertEqual((ev["completion"], ev["max_runtime"]), ("callback", "30m0s"))
        occ = q.events.trigger(ev["id"])
        d, header = wait_for("the callback delivery", lambda: r.got and r.got[0])
        self.assertEqual(d["occurrence_id"], occ["id"])
        run = d["run"]
        self.assertIsInstance(run, qhronos.DeliveryRun, "verify_delivery gives the run as a DeliveryRun")
        self.assertRegex(run["token"], r"^qrun_")
        self.assertEqual(header, run["token"], "the Qhronos-Run-Token header carries the payload's token")
        self.assertEqual(run["complete_url"], f"{self.srv.url}/occurrences/{occ['id']}/complete")
        self.assertEqual(run["heartbeat_url"], f"{self.srv.url}/occurrences/{occ['id']}/heartbeat")
        deadline = to_the_second(run["deadline"])
        self.assertLess(abs(deadline - (datetime.now(timezone.utc) + timedelta(minutes=30))), timedelta(minutes=1))
        self.wait_running(occ["id"])

        # A worker that holds only the run's JSON (as a queue would hand it over) and no API token.
        worker = qhronos.DeliveryRun(json.loads(json.dumps(run)))
        beat = worker.heartbeat()
        self.assertEqual(beat["status"], "running")
        self.assertTrue(beat["run"]["heartbeat_at"])
        self.assertGreaterEqual(to_the_second(beat["run"]["deadline"]), deadline, "the heartbeat moves the deadline")

        output = {"rows": 42, "file": "export-2026-12-01.csv"}
        done = worker.complete("succeeded", output)
        self.assertEqual((done["status"], done["run"]["status"], done["run"]["output"]), ("completed", "succeeded", output))
        stored = q.occurrences.get(occ["id"])
        self.assertEqual((stored["status"], stored["run"]["output"]), ("completed", output))
        self.assertIsInstance(stored["run"]["duration_ms"], int)

        self.assertEqual(run.complete("succeeded", output)["status"], "completed", "the same report again answers the same")
        with self.assertRaises(qhronos.ConflictError) as cf:
            run.complete("failed")
        self.assertEqual(cf.exception.status, 409)
        with self.assertRaises(qhronos.ConflictError):
            run.heartbeat()

    def test_occurrences_complete_and_heartbeat(self):
        q = self.q
        r, secret = self.run_receiver()
        ev = q.events.create(name="invoice run", start_time=in_an_hour(), webhook=r.url, hmac_secret=secret,
                             completion="callback")
        self.assertEqual(ev["max_runtime"], "1h0m0s", "the default max_runtime")
        first = q.events.trigger(ev["id"])
        wait_for("the first delivery", lambda: len(r.got) >= 1)
        second = q.events.trigger(ev["id"])
        wait_for("the second delivery", lambda: len(r.got) >= 2)
        for o in (first, second):
            self.wait_running(o["id"])
        first_run = next(d for d, _ in r.got if d["occurrence_id"] == first["id"])["run"]

        beat = q.occurrences.heartbeat(second["id"])
        self.assertEqual(beat["status"], "running")
        self.assertTrue(beat["run"]["heartbeat_at"])
        with self.assertRaises(qhronos.UnauthorizedError):
            qhronos.Client(self.srv.url, token=first_run["token"], retries=0).occurrences.complete(second["id"], "succeeded")
        failed = q.occurrences.complete(second["id"], "failed", output={"error": "ledger locked"})
        self.assertEqual((failed["status"], failed["run"]["output"]), ("failed", {"error": "ledger locked"}))
        with self.assertRaises(qhronos.ConflictError):
            q.occurrences.heartbeat(second["id"])

        # The run token as a client's token completes its own occurrence.
        own = qhronos.Client(self.srv.url, token=first_run["token"])
        self.assertEqual(own.occurrences.complete(first["id"], status="succeeded")["status"], "completed")

        plain = q.events.update(ev["id"], completion="response")
        self.assertEqual((plain["completion"], plain["max_runtime"]), ("response", None), "max_runtime goes with callback")
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.events.create(name="bad", start_time=in_an_hour(), webhook="https://example.com/h", max_runtime="10m")
        self.assertEqual(cm.exception.field, "max_runtime")

    def test_concurrency_keys(self):
        """Events share a key; the key shows its runs in flight and waiting, a
        pause holds them, a resume lets them go. Callback runs hold their slot
        until completed, so what is in flight is the test's to decide."""
        q = self.q
        r, secret = self.run_receiver()
        key = f"tenant:{secrets.token_hex(4)}@sdk-py"  # ':' and '@' travel escaped in the path
        concurrency = {"key": key, "limit": 1}

        def job(name):
            return q.events.create(name=name, start_time=in_an_hour(), webhook=r.url, hmac_secret=secret,
                                   completion="callback", concurrency=concurrency)

        def counts():
            k = q.concurrency_keys.get(key)
            return k["in_flight"], k["waiting"]

        a, b = job("sync a"), job("sync b")
        self.assertEqual(a["concurrency"], concurrency)
        self.assertEqual(q.concurrency_keys.get(key), {"key": key, "limit": 1, "in_flight": 0, "waiting": 0,
                                                       "paused": False, "paused_at": None, "paused_by": None})

        first = q.events.trigger(a["id"])
        self.wait_running(first["id"])
        second = q.events.trigger(b["id"])
        wait_for("the second waits for the key's slot", lambda: counts()[1] == 1)
        self.assertEqual(counts(), (1, 1))
        held = q.occurrences.get(second["id"])
        self.assertEqual((held["status"], held["reason"]), ("pending", "concurrency_wait"))

        paused = q.concurrency_keys.pause(key)
        self.assertTrue(paused["paused"])
        self.assertTrue(paused["paused_at"] and paused["paused_by"], paused)
        self.assertTrue(q.concurrency_keys.pause(key)["paused"], "pausing again answers the same")
        q.occurrences.complete(first["id"], "succeeded")
        wait_for("the first run's slot is freed", lambda: counts()[0] == 0)
        time.sleep(1)  # a second in which nothing of a paused key may start
        self.assertEqual(len(r.got), 1, "no run starts while the key is paused")
        self.assertEqual(counts(), (0, 1))

        resumed = q.concurrency_keys.resume(key)
        self.assertEqual((resumed["paused"], resumed["paused_at"], resumed["paused_by"]), (False, None, None))
        wait_for("the second run after the resume", lambda: len(r.got) >= 2)
        self.assertEqual(r.got[1][0]["occurrence_id"], second["id"])
        wait_for("the second run holds the slot", lambda: counts() == (1, 0))
        q.occurrences.complete(second["id"], "succeeded")
        wait_for("every slot is freed", lambda: counts() == (0, 0))

        # Pages of one key: the cursor walks every key once.
        other = f"{key}.b"
        c = q.events.create(name="other", start_time=in_an_hour(), webhook="https://example.com/h",
                            concurrency={"key": other, "limit": 3})
        page = q.concurrency_keys.list(limit=1)
        self.assertEqual(len(page.items), 1)
        self.assertTrue(page.next_cursor, "a next cursor while more keys follow")
        walked = list(q.concurrency_keys.all(limit=1))
        seen = {k["key"]: k for k in walked}
        self.assertEqual(len(seen), len(walked), "no key listed twice")
        self.assertIn(key, seen)
        self.assertEqual(seen[other], {"key": other, "limit": 3, "in_flight": 0, "waiting": 0, "paused": False,
                                       "paused_at": None, "paused_by": None})

        # None removes it; a key no event names is gone.
        self.assertIsNone(q.events.update(c["id"], concurrency=None).get("concurrency"))
        with self.assertRaises(qhronos.NotFoundError):
            q.concurrency_keys.get(other)
        with self.assertRaises(qhronos.NotFoundError):
            q.concurrency_keys.pause(other)
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.events.create(name="bad", start_time=in_an_hour(), webhook="https://example.com/h",
                            concurrency={"key": "customer 42", "limit": 2})
        self.assertEqual(cm.exception.field, "concurrency.key")

    def test_signed_delivery(self):
        secret = f"plain-{secrets.token_hex(8)}"
        ev = self.q.events.create(name="signed", start_time=in_an_hour(), webhook=self.receiver.url, hmac_secret=secret)
        occ, req = self.trigger_and_receive(ev["id"])
        d = qhronos.verify_delivery(req["headers"], req["body"], secret)
        self.assertEqual((d["occurrence_id"], d["event_id"], d["name"]), (occ["id"], ev["id"], "signed"))
        # the email.message.Message http.server hands over works as it is
        self.assertEqual(qhronos.verify_delivery(req["raw_headers"], req["body"], secret)["occurrence_id"], occ["id"])

        with self.assertRaises(qhronos.WebhookVerificationError):
            qhronos.verify_delivery(req["headers"], req["body"], "wrong-secret")
        with self.assertRaises(qhronos.WebhookVerificationError):
            qhronos.verify_delivery(req["headers"], req["body"].replace(b'"signed"', b'"forged"'), secret)
        # The same request six minutes later (a replay): outside the tolerance.
        with self.assertRaisesRegex(qhronos.WebhookVerificationError, "too old"):
            qhronos.verify_delivery(req["headers"], req["body"], secret, now=time.time() + 360)

        legacy_only = {"X-Qhronos-Signature": req["headers"]["X-Qhronos-Signature"]}
        with self.assertRaises(qhronos.WebhookVerificationError):
            qhronos.verify_delivery(legacy_only, req["body"], secret)
        self.assertEqual(qhronos.verify_delivery(legacy_only, req["body"], secret, legacy=True)["occurrence_id"], occ["id"])
        with self.assertRaises(qhronos.WebhookVerificationError):
            qhronos.verify_delivery(legacy_only, req["body"], "wrong", legacy=True)

    def test_secret_rotation(self):
        old = f"old-{secrets.token_hex(8)}"
        ev = self.q.events.create(name="rotating", start_time=in_an_hour(), webhook=self.receiver.url, hmac_secret=old)
        rotation = self.q.events.rotate_secret(ev["id"], grace="1h")
        new = rotation["hmac_secret"]
        self.assertNotEqual(new, old)
        self.assertTrue(rotation.get("previous_secret_expires_at"))
        _, req = self.trigger_and_receive(ev["id"])
        for s in (new, old, ["unrelated", new]):
            qhronos.verify_delivery(req["headers"], req["body"], s)
        with self.assertRaises(qhronos.WebhookVerificationError):
            qhronos.verify_delivery(req["headers"], req["body"], "unrelated")
        legacy = {k: req["headers"][k] for k in ("X-Qhronos-Signature", "X-Qhronos-Signature-New")}
        qhronos.verify_delivery(legacy, req["body"], old, legacy=True)
        qhronos.verify_delivery(legacy, req["body"], new, legacy=True)

    def test_endpoints(self):
        q, tag = self.q, tag_of("ep")
        ep = q.endpoints.create(name="billing", url=self.receiver.url, tags=[tag])
        self.assertTrue(ep.get("secret"), "the secret is shown on create")
        self.assertEqual([e["id"] for e in q.endpoints.list(tags=[tag]).items], [ep["id"]])
        self.assertEqual([e["id"] for e in q.endpoints.all(tags=[tag])], [ep["id"]])
        self.assertEqual(q.endpoints.get(ep["id"])["name"], "billing")
        self.assertEqual(q.endpoints.update(ep["id"], description="invoices")["description"], "invoices")
        self.assertEqual(q.endpoints.disable(ep["id"])["state"], "disabled")
        self.assertEqual(q.endpoints.enable(ep["id"])["state"], "healthy")
        ev = q.events.create(name="via endpoint", start_time=in_an_hour(),
                             action={"type": "webhook", "params": {"endpoint_id": ep["id"]}})
        _, req = self.trigger_and_receive(ev["id"])
        self.assertEqual(qhronos.verify_delivery(req["headers"], req["body"], ep["secret"])["event_id"], ev["id"])
        rotated = q.endpoints.rotate_secret(ep["id"], grace="1h")
        self.assertNotEqual(rotated["secret"], ep["secret"])
        with self.assertRaises(qhronos.ConflictError):
            q.endpoints.delete(ep["id"])
        q.events.delete(ev["id"])

    def test_portal_links(self):
        q, tag = self.q, tag_of("customer")
        mine = q.endpoints.create(name="mine", url=self.receiver.url, tags=[tag])
        q.endpoints.create(name="theirs", url=self.receiver.url, tags=[tag_of("customer")])
        link = q.portal_links.create(tags=[tag], expires_in="15m", return_url="https://app.example.com/back")
        self.assertTrue(link["url"].startswith(f"{self.srv.url}/portal/login?code="), link["url"])
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(link["url"]).query)["code"][0]
        anonymous = qhronos.Client(self.srv.url)
        session = anonymous.portal_links.redeem(code)
        self.assertEqual(session["tags"], [tag])
        self.assertEqual(session["return_url"], "https://app.example.com/back")
        self.assertEqual(session["expires_at"], link["expires_at"])
        with self.assertRaises(qhronos.NotFoundError):
            anonymous.portal_links.redeem(code)

        portal = qhronos.Client(self.srv.url, token=session["token"])
        self.assertEqual([e["id"] for e in portal.endpoints.list().items], [mine["id"]])
        with self.assertRaises(qhronos.ForbiddenError):
            portal.events.list()
        with self.assertRaises(qhronos.ForbiddenError):
            portal.portal_links.create(tags=[tag])

    def test_topics_and_subscriptions(self):
        q, sfx = self.q, secrets.token_hex(4)
        name = f"billing-{sfx}.invoice.paid"

        def etag_of(path):
            return q.send("GET", path).headers.get("ETag")

        # Topics: the catalogue, in name order; admins write it, every token reads it.
        schema = {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}
        topic = q.topics.create(name=name, description="an invoice was paid", schema=schema)
        self.assertEqual((topic["name"], topic["description"], topic["schema"], topic["version"]),
                         (name, "an invoice was paid", schema, 1))
        with self.assertRaises(qhronos.ConflictError):
            q.topics.create(name=name)
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.topics.create({"name": "Not A Name"})
        self.assertEqual(cm.exception.field, "name")
        self.assertEqual(q.topics.get(name), topic)
        other = q.topics.create(name=f"billing-{sfx}.invoice.void")
        self.assertIsNone(other["schema"])
        page = q.topics.list(limit=1)
        self.assertEqual(len(page.items), 1)
        self.assertTrue(page.next_cursor, "a next cursor while more topics follow")
        names = [t["name"] for t in q.topics.all(limit=1)]
        self.assertEqual(len(set(names)), len(names), "no topic listed twice")
        self.assertEqual(sorted(names), names, "in name order")
        self.assertEqual([n for n in names if n.startswith(f"billing-{sfx}.")], [name, other["name"]])

        etag = etag_of(f"/topics/{name}")
        self.assertTrue(etag)
        described = q.topics.update(name, description="paid", if_match=etag)
        self.assertEqual((described["description"], described["schema"], described["version"]), ("paid", schema, 2))
        with self.assertRaises(qhronos.PreconditionFailedError):
            q.topics.update(name, description="stale", if_match=etag)
        self.assertIsNone(q.topics.update(name, schema=None)["schema"], "None removes the schema")
        minted = q.tokens.create(sub="sdk-py-topics", access="read", expires_at=in_an_hour())
        reader = qhronos.Client(self.srv.url, token=minted["token"], retries=10)
        self.assertEqual(reader.topics.get(name)["name"], name)
        with self.assertRaises(qhronos.ForbiddenError):
            reader.topics.create(name=f"billing-{sfx}.reader")

        # Subscriptions: an endpoint subscribed to a topic or a pattern, with a CEL filter.
        tag = tag_of("sub")
        ep = q.endpoints.create(name="invoices", url=self.receiver.url, tags=[tag])
        sub = q.subscriptions.create(topic=name, endpoint_id=ep["id"], filter="metadata.amount > 100",
                                     description="big ones", tags=[tag])
        self.assertRegex(sub["id"], r"^[0-9a-f-]{36}$")
        self.assertEqual([sub[k] for k in ("topic", "endpoint_id", "filter", "description", "tags", "paused", "version")],
                         [name, ep["id"], "metadata.amount > 100", "big ones", [tag], False, 1])
        wide = q.subscriptions.create({"topic": f"billing-{sfx}.*", "endpoint_id": ep["id"], "tags": [tag]}, paused=True)
        self.assertEqual((wide["filter"], wide["paused"]), (None, True))
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.subscriptions.create(topic=f"billing-{sfx}.nothing", endpoint_id=ep["id"])
        self.assertEqual(cm.exception.field, "topic")
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.subscriptions.create(topic=name, endpoint_id=ep["id"], filter="metadata.amount >")
        self.assertEqual(cm.exception.field, "filter")

        self.assertEqual(q.subscriptions.get(sub["id"]), sub)
        ids = lambda page: [s["id"] for s in page.items]  # noqa: E731
        self.assertEqual(ids(q.subscriptions.list(tags=[tag])), [wide["id"], sub["id"]], "newest first")
        self.assertEqual(ids(q.subscriptions.list(topic=name)), [sub["id"]], "the topic as written")
        self.assertEqual(ids(q.subscriptions.list(endpoint_id=ep["id"], paused=True)), [wide["id"]])
        first = q.subscriptions.list(tags=tag, limit=1)
        self.assertEqual((len(first.items), bool(first.next_cursor)), (1, True))
        self.assertEqual([s["id"] for s in q.subscriptions.all(tags=[tag], limit=1)], [wide["id"], sub["id"]])

        sub_tag = etag_of(f"/subscriptions/{sub['id']}")
        changed = q.subscriptions.update(sub["id"], filter="metadata.amount > 1000", if_match=sub_tag)
        self.assertEqual((changed["filter"], changed["description"], changed["version"]),
                         ("metadata.amount > 1000", "big ones", 2))
        with self.assertRaises(qhronos.PreconditionFailedError):
            q.subscriptions.update(sub["id"], description="stale", if_match=sub_tag)
        cleared = q.subscriptions.update(sub["id"], filter=None, description=None)
        self.assertEqual((cleared["filter"], cleared["description"]), (None, ""), "None clears the filter and the description")
        self.assertTrue(q.subscriptions.pause(sub["id"])["paused"])
        self.assertTrue(q.subscriptions.pause(sub["id"])["paused"], "pausing again answers the same")
        self.assertFalse(q.subscriptions.resume(sub["id"])["paused"])
        self.assertFalse(q.subscriptions.resume(wide["id"])["paused"])

        # What a subscription names cannot go first.
        with self.assertRaises(qhronos.ConflictError):
            q.topics.delete(name)
        with self.assertRaises(qhronos.ConflictError):
            q.endpoints.delete(ep["id"])
        q.subscriptions.delete(sub["id"], if_match=etag_of(f"/subscriptions/{sub['id']}"))
        q.subscriptions.delete(wide["id"])
        with self.assertRaises(qhronos.NotFoundError):
            q.subscriptions.get(sub["id"])
        q.topics.delete(name, if_match=etag_of(f"/topics/{name}"))
        q.topics.delete(other["name"])
        with self.assertRaises(qhronos.NotFoundError):
            q.topics.get(name)
        q.endpoints.delete(ep["id"])

    def test_fan_out(self):
        q = self.q
        topic = f"digest-{secrets.token_hex(4)}.daily"
        q.topics.create(name=topic, schema={"type": "object", "required": ["region"],
                                            "properties": {"region": {"type": "string"}}})
        failing = threading.Event()
        failing.set()
        ok = Receiver()
        flaky = Receiver(lambda request: 503 if failing.is_set() else 200)
        self.addCleanup(ok.close)
        self.addCleanup(flaky.close)
        ep_ok = q.endpoints.create(name="ok", url=ok.url)
        ep_flaky = q.endpoints.create(name="flaky", url=flaky.url)
        sub_ok = q.subscriptions.create(topic=topic, endpoint_id=ep_ok["id"])
        sub_us = q.subscriptions.create(topic=topic, endpoint_id=ep_ok["id"], filter='metadata.region == "us"')
        sub_flaky = q.subscriptions.create(topic=topic, endpoint_id=ep_flaky["id"])

        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.events.create(name="digest", start_time="in 1 hour", topic=topic + "x")
        self.assertEqual(cm.exception.field, "topic")
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.events.create(name="digest", start_time="in 1 hour", topic=topic, metadata={"region": 7})
        self.assertEqual(cm.exception.field, "metadata")
        ev = q.events.create(name="digest", start_time="in 1 hour", topic=topic, metadata={"region": "eu"},
                             retry={"max_attempts": 1})
        self.assertEqual(ev["topic"], topic)
        self.assertEqual(ev["action"], {"type": "topic", "params": {"topic": topic}})

        fired = q.events.trigger(ev["id"])
        failed = wait_for("the fan-out ends",
                          lambda: (lambda o: o["status"] == "failed" and o)(q.occurrences.get(fired["id"])))
        self.assertEqual(failed["fanout"], {"subscriptions": 3, "delivered": 1, "failed": 1, "filtered": 1, "pending": 0})

        first = q.occurrences.deliveries(fired["id"], limit=2)
        self.assertEqual((len(first.items), bool(first.next_cursor)), (2, True))
        every = list(q.occurrences.all_deliveries(fired["id"], limit=1))
        self.assertEqual([d["subscription_id"] for d in every], sorted([sub_ok["id"], sub_us["id"], sub_flaky["id"]]),
                         "each once, in subscription id order")
        by_id = {d["subscription_id"]: d for d in every}
        self.assertEqual((by_id[sub_ok["id"]]["status"], by_id[sub_ok["id"]]["endpoint_id"],
                          [a["status_code"] for a in by_id[sub_ok["id"]]["attempts"]]), ("delivered", ep_ok["id"], [200]))
        self.assertEqual((by_id[sub_us["id"]]["status"], by_id[sub_us["id"]]["attempts"]), ("filtered", []))
        self.assertEqual(by_id[sub_flaky["id"]]["status"], "failed")
        self.assertIn("503", by_id[sub_flaky["id"]]["error"])
        self.assertEqual(by_id[sub_flaky["id"]]["attempts"][0]["subscription_id"], sub_flaky["id"])

        # The receiver is back: its delivery alone goes again.
        failing.clear()
        with self.assertRaises(qhronos.BadRequestError) as cm:
            q.occurrences.replay_delivery(fired["id"], sub_us["id"])
        self.assertEqual(cm.exception.field, "subscription_id")
        self.assertEqual(q.occurrences.replay_delivery(fired["id"], sub_flaky["id"])["id"], fired["id"])
        wait_for("the replay is delivered", lambda: q.occurrences.get(fired["id"])["status"] == "completed")
        self.assertEqual((len(ok.requests), len(flaky.requests)), (1, 2), "the other subscriptions are not sent again")

        attempts = q.subscriptions.deliveries(sub_flaky["id"])
        self.assertEqual([(a["outcome"], a["status_code"], a["occurrence_id"]) for a in attempts.items],
                         [("completed", 200, fired["id"]), ("failed", 503, fired["id"])], "newest first")
        self.assertEqual([a["id"] for a in q.subscriptions.all_deliveries(sub_flaky["id"], limit=1)],
                         [a["id"] for a in attempts.items])
        self.assertEqual(q.subscriptions.deliveries(sub_us["id"]).items, [], "a filtered subscription was sent nothing")
        with self.assertRaises(qhronos.NotFoundError):
            q.subscriptions.deliveries("00000000-0000-4000-8000-000000000000")

    def test_calendars(self):
        q, tag = self.q, tag_of("cal")
        cal = q.calendars.create(name="holidays", dates=["2031-12-25"], tags=[tag])
        self.assertEqual([c["id"] for c in q.calendars.all(tags=[tag])], [cal["id"]])
        self.assertEqual([c["id"] for c in q.calendars.list(tags=[tag]).items], [cal["id"]])
        self.assertEqual(q.calendars.get(cal["id"])["name"], "holidays")
        upd = q.calendars.update(cal["id"], name="holidays", dates=["2031-12-25", "2031-12-26"], tags=[tag])
        self.assertEqual(len(upd["dates"]), 2)
        q.calendars.delete(cal["id"])
        with self.assertRaises(qhronos.NotFoundError):
            q.calendars.get(cal["id"])

    def test_tokens_channels_system(self):
        q = self.q
        tok = q.tokens.create(sub="sdk-py-tok", access="read", expires_at=in_an_hour())
        self.assertTrue(any(x["id"] == tok["id"] for x in q.tokens.list()))
        q.tokens.revoke(tok["id"])
        with self.assertRaises(qhronos.UnauthorizedError):
            qhronos.Client(self.srv.url, token=tok["token"]).events.list()

        ch = q.notification_channels.create(name=f"ops-{secrets.token_hex(3)}", type="webhook", url=self.receiver.url)
        self.assertTrue(any(c["id"] == ch["id"] for c in q.notification_channels.list()))
        self.assertEqual(q.notification_channels.get(ch["id"])["id"], ch["id"])
        self.assertEqual(q.notification_channels.update(ch["id"], kinds=["delivery_failed"])["kinds"], ["delivery_failed"])
        self.assertTrue(q.notification_channels.test(ch["id"])["delivered"])
        q.notification_channels.delete(ch["id"])
        with self.assertRaises(qhronos.NotFoundError):
            q.notification_channels.get(ch["id"])

        self.assertEqual(q.health()["status"], "ok")
        self.assertEqual(q.healthz()["status"], "ok")
        self.assertEqual(q.ready()["status"], "ok")
        status = q.status()
        self.assertTrue(status["version"])
        self.assertEqual(status["backends"]["database"], self.srv.backend, "the backend the run asked for")
        if os.environ.get("QHRONOS_SDK_REDIS_URL"):
            self.assertEqual(status["backends"]["coordination"], "redis")
        self.assertIsInstance(q.stats()["total"], dict)
        self.assertIsInstance(q.stats_timeline(step="1h")["buckets"], list)
        report = q.punctuality(group_by="tag")
        self.assertEqual(report["group_by"], "tag")
        self.assertIsInstance(report["groups"], list)
        self.assertIn("qhronos_", q.metrics())
        with open(REPO_ROOT / "internal" / "api" / "openapi.json") as f:
            self.assertEqual(q.openapi(), json.load(f), "the served document is the one the types come from")

    def test_websocket_client_hook(self):
        client, secret = f"sdk-{secrets.token_hex(3)}", f"ws-{secrets.token_hex(8)}"
        ev = self.q.events.create(name="pushed", start_time=in_an_hour(), hmac_secret=secret,
                                  action={"type": "websocket", "params": {"client_name": client, "require_ack": True}})
        with self.q.subscribe(client_name=client) as conn:
            occ = self.q.events.trigger(ev["id"])
            frame = conn.next(timeout=60)
            while frame and frame["type"] != "event":
                frame = conn.next(timeout=60)
            self.assertEqual(frame["occurrence_id"], occ["id"])
            d = qhronos.verify_delivery(frame["webhook"]["headers"], frame["webhook"]["body"], secret)
            self.assertEqual(d["occurrence_id"], occ["id"])
            conn.ack(frame["event_id"], frame["occurrence_id"])
            wait_for("the acked occurrence completes", lambda: self.q.occurrences.get(occ["id"])["status"] == "completed")
        with self.assertRaises(qhronos.HandshakeError):
            qhronos.Client(self.srv.url, token="not-a-token").subscribe(client_name=client)


if __name__ == "__main__":
    unittest.main()
