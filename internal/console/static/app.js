// Qhronos console: progressive enhancement over server-rendered pages.
// Times in the viewer's zone, charts, the event form's live preview and the
// Live page. No inline script anywhere (strict CSP); text is always set with
// textContent, never parsed as HTML.
(function () {
  "use strict";

  // One layout for every time, as the server writes it (render.go's
  // timeLayout): "2026-11-30 09:00:00 +01:00", 24-hour with the UTC offset,
  // in zone tz (an IANA name) or, without one, the browser's zone.
  function fmt(d, tz) {
    var opts = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
      second: "2-digit", hourCycle: "h23", timeZoneName: "longOffset" };
    if (tz) { opts.timeZone = tz; }
    var p = {};
    try {
      new Intl.DateTimeFormat("en-US", opts).formatToParts(d).forEach(function (x) { p[x.type] = x.value; });
    } catch (e) {
      return d.toISOString();
    }
    var off = (p.timeZoneName || "").replace("GMT", "") || "+00:00";
    return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second + " " + off;
  }

  var browserZone = new Intl.DateTimeFormat().resolvedOptions().timeZone || "your browser's zone";

  // Times across events are written in the browser's zone; the page says
  // which, once. Times on an event's page are the server's, in its zone.
  function localTimes(root) {
    var n = 0;
    root.querySelectorAll("time[data-local]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (!isNaN(d)) {
        el.textContent = fmt(d);
        n++;
      }
    });
    zoneNote(n > 0 || !!document.getElementById("live-rows"));
  }

  function zoneNote(show) {
    var note = document.getElementById("zone-note");
    if (!note || note.hasAttribute("data-zone") || !show) { return; }
    note.textContent = "Times in " + browserZone + ", your browser's zone: 24-hour with the UTC offset; hover a time for UTC.";
    note.setAttribute("data-browser-zone", browserZone);
    note.hidden = false;
  }

  function csrf() {
    var m = document.getElementById("main");
    return m ? m.getAttribute("data-csrf") : "";
  }

  // postForm sends a form body to one of the console's JSON helpers and
  // resolves to its answer, or to null when the session ended (the page then
  // goes to sign in).
  function postForm(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf(), "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString()
    }).then(function (res) {
      if (res.status === 401) { window.location.assign("/ui/login?ended=1"); return null; }
      return res.json();
    });
  }

  // ---- charts (uPlot) -------------------------------------------------------
  // Time axes and legends on a 24-hour clock in the browser's zone, the date
  // under each midnight (uPlot's defaults are 12-hour).
  function pad2(n) { return (n < 10 ? "0" : "") + n; }
  var timeAxis = {
    values: function (u, splits) {
      return splits.map(function (s) {
        var d = new Date(s * 1000), hm = pad2(d.getHours()) + ":" + pad2(d.getMinutes());
        return d.getHours() === 0 && d.getMinutes() === 0 ? hm + "\n" + d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()) : hm;
      });
    }
  };
  var timeSeries = { value: "{YYYY}-{MM}-{DD} {HH}:{mm}" };

  function charts() {
    if (typeof uPlot === "undefined") { return; }
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      var d;
      try { d = JSON.parse(el.getAttribute("data-chart")); } catch (e) { return; }
      if (!d.x || !d.x.length) { return; }
      var width = Math.max(260, el.clientWidth || 560);
      var opts = {
        width: width, height: 220,
        series: [
          timeSeries,
          { label: "completed/min", stroke: "#116b35", width: 2, scale: "n" },
          { label: "failed/min", stroke: "#a4161a", width: 2, scale: "n" },
          { label: "lateness p50 ms", stroke: "#1456c8", dash: [4, 4], scale: "ms" },
          { label: "lateness p99 ms", stroke: "#7a4b00", dash: [2, 3], scale: "ms" }
        ],
        axes: [timeAxis, { scale: "n", label: "per min" }, { scale: "ms", side: 1, label: "ms", grid: { show: false } }],
        scales: { n: { range: function (u, min, max) { return [0, Math.max(1, max)]; } } }
      };
      var plot = new uPlot(opts, [d.x, d.completed, d.failed, d.p50, d.p99], el);
      window.addEventListener("resize", function () {
        plot.setSize({ width: Math.max(260, el.clientWidth), height: 220 });
      });
    });
  }

  // The punctuality trend: the on-time share (percent) and the instants due
  // per step.
  function punctualityChart() {
    if (typeof uPlot === "undefined") { return; }
    document.querySelectorAll("[data-punctuality-chart]").forEach(function (el) {
      var d;
      try { d = JSON.parse(el.getAttribute("data-punctuality-chart")); } catch (e) { return; }
      if (!d.x || !d.x.length) { return; }
      var opts = {
        width: Math.max(260, el.clientWidth || 560), height: 220,
        series: [
          timeSeries,
          { label: "on time %", stroke: "#116b35", width: 2, scale: "pct" },
          { label: "due", stroke: "#1456c8", dash: [4, 4], scale: "n" }
        ],
        axes: [timeAxis, { scale: "pct", label: "% on time" }, { scale: "n", side: 1, label: "due", grid: { show: false } }],
        scales: { pct: { range: [0, 100] }, n: { range: function (u, min, max) { return [0, Math.max(1, max)]; } } }
      };
      var plot = new uPlot(opts, [d.x, d.on_time, d.due], el);
      window.addEventListener("resize", function () {
        plot.setSize({ width: Math.max(260, el.clientWidth), height: 220 });
      });
    });
  }

  // The Punctuality form: From and To apply to a custom window only, so they
  // are disabled (and not sent) while a preset window is chosen.
  function punctualityRange() {
    var range = document.getElementById("pu-range");
    if (!range) { return; }
    var sync = function () {
      ["pu-from", "pu-to"].forEach(function (id) {
        var input = document.getElementById(id);
        if (input) { input.disabled = range.value !== "custom"; }
      });
    };
    range.addEventListener("change", sync);
    sync();
  }

  // Sortable tables: a column heading's button sorts the body's rows by that
  // column (data-value), ascending then descending; aria-sort says which.
  function sortableTables() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      var heads = table.querySelectorAll("thead th");
      heads.forEach(function (th, col) {
        var button = th.querySelector("button[data-sort]");
        if (!button) { return; }
        button.addEventListener("click", function () {
          var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
          heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
          th.setAttribute("aria-sort", dir);
          var numeric = button.getAttribute("data-sort") === "num";
          var body = table.tBodies[0];
          var rows = Array.prototype.slice.call(body.rows);
          var key = function (row) {
            var v = row.cells[col].getAttribute("data-value") || "";
            return numeric ? parseFloat(v) : v.toLowerCase();
          };
          rows.sort(function (a, b) {
            var x = key(a), y = key(b);
            var c = x < y ? -1 : x > y ? 1 : 0;
            return dir === "ascending" ? c : -c;
          });
          rows.forEach(function (row) { body.appendChild(row); });
        });
      });
    });
  }

  // ---- event form: live preview -------------------------------------------
  function preview() {
    var form = document.getElementById("event-form");
    var list = document.getElementById("preview-list");
    if (!form || !list) { return; }
    var errEl = document.getElementById("preview-error");
    var empty = document.getElementById("preview-empty");
    var zoneEl = document.getElementById("preview-zone");
    var timer = null, seq = 0;

    // Each error under its own field (errors: form field → message).
    function fieldErrors(errors) {
      form.querySelectorAll("[data-error-for]").forEach(function (p) {
        var msg = errors[p.getAttribute("data-error-for")];
        if (msg) {
          p.textContent = msg; p.hidden = false; p.setAttribute("data-live", "1");
        }
      });
    }

    function clearLiveErrors() {
      form.querySelectorAll("[data-error-for][data-live]").forEach(function (p) {
        p.textContent = ""; p.hidden = true; p.removeAttribute("data-live");
      });
    }

    function run() {
      var mine = ++seq;
      // Everything the schedule depends on: rule, zone, start, DST policy,
      // jitter and the calendars (id/policy pairs in the page's order).
      var body = new URLSearchParams();
      ["timezone", "start_time", "rule_kind", "rule", "dst_gap", "dst_repeat", "jitter"].forEach(function (n) {
        var el = form.elements[n];
        if (el) { body.set(n, el.value); }
      });
      form.querySelectorAll("select[data-calendar]").forEach(function (sel) {
        body.append("calendar_id", sel.getAttribute("data-calendar"));
        body.append("calendar_policy", sel.value);
      });
      postForm("/ui/preview", body).then(function (data) {
        if (!data || mine !== seq) { return; }
        list.textContent = "";
        if (data.error) {
          errEl.textContent = data.error; errEl.hidden = false;
          clearLiveErrors();
          fieldErrors(data.errors || {});
          empty.hidden = true;
          return;
        }
        errEl.hidden = true; clearLiveErrors();
        if (data.timezone) {
          zoneEl.textContent = "In " + data.timezone + " (the event's zone), 24-hour with the UTC offset; hover for UTC.";
        }
        var inZone = function (d) { return fmt(d, data.timezone); };
        (data.instants || []).forEach(function (i) {
          var li = document.createElement("li");
          li.textContent = inZone(new Date(i.utc));
          li.setAttribute("data-local", i.local);
          li.title = "UTC " + i.utc;
          var mark = "";
          if (i.skipped) {
            mark = "skipped";
            tag(li, "skipped · " + (i.reason || ""));
          } else if (i.original) {
            // A new schedule has no exceptions: an instant with an original
            // was rolled by a calendar.
            mark = "rolled";
            tag(li, "rolled from " + inZone(new Date(i.original)));
          }
          if (mark) { li.className = mark; li.setAttribute("data-mark", mark); }
          if (i.reason) { li.setAttribute("data-reason", i.reason); }
          list.appendChild(li);
        });
        empty.hidden = (data.instants || []).length > 0;
        if (!empty.hidden) { empty.textContent = "This schedule has no future instant."; }
      }).catch(function () { /* the next keystroke retries */ });
    }

    function tag(li, text) {
      var t = document.createElement("span");
      t.className = "tag";
      t.textContent = text;
      li.appendChild(document.createTextNode(" "));
      li.appendChild(t);
    }

    // Only the chosen kind of target is asked for.
    function targetKind() {
      var ep = form.querySelector("#f-kind-endpoint");
      var url = form.querySelector("#f-target"), sel = form.querySelector("#f-endpoint");
      if (!ep || !url || !sel) { return; }
      var useEp = ep.checked;
      [url, url.previousElementSibling].forEach(function (el) { if (el) { el.hidden = useEp; } });
      [sel, sel.previousElementSibling].forEach(function (el) { if (el) { el.hidden = !useEp; } });
    }
    form.querySelectorAll('input[name="target_kind"]').forEach(function (r) {
      r.addEventListener("change", targetKind);
    });
    targetKind();

    // An event that targets a topic runs no action: the topic picker is
    // shown, and the target, encryption, signing and completion fields are
    // hidden (the server leaves them out for a topic).
    function actionKind() {
      var sel = form.querySelector("#f-action");
      var topic = form.querySelector("#f-topic-fields"), action = form.querySelector("#f-action-fields");
      if (!sel || !topic || !action) { return; }
      var isTopic = sel.value === "topic";
      topic.hidden = !isTopic;
      action.hidden = isTopic;
    }
    var actionSel = form.querySelector("#f-action");
    if (actionSel) { actionSel.addEventListener("change", actionKind); }
    actionKind();

    // Max runtime applies to runs completed by callback only: it is hidden
    // and disabled (so not sent) while completion is by response.
    function completion() {
      var cb = form.querySelector("#f-completion-callback");
      var input = form.querySelector("#f-max-runtime");
      if (!cb || !input) { return; }
      var off = !cb.checked;
      input.disabled = off;
      [input, input.previousElementSibling].forEach(function (el) { if (el) { el.hidden = off; } });
    }
    form.querySelectorAll('input[name="completion"]').forEach(function (r) {
      r.addEventListener("change", completion);
    });
    completion();

    form.addEventListener("input", function (e) {
      if (!e.target.hasAttribute("data-preview")) { return; }
      clearTimeout(timer);
      timer = setTimeout(run, 250);
    });
    form.addEventListener("change", function (e) {
      if (e.target.hasAttribute("data-preview")) { clearTimeout(timer); run(); }
    });
    run();
  }

  // ---- Live ------------------------------------------------------------------
  function live() {
    var rows = document.getElementById("live-rows");
    if (!rows) { return; }
    var state = document.getElementById("live-state");
    var empty = document.getElementById("live-empty");
    var pauseBtn = document.getElementById("live-pause");
    var tags = document.getElementById("live-tags").value;
    var paused = false, held = [], maxRows = 200;
    var byID = {};

    function cell(tr, text, cls) {
      var td = document.createElement("td");
      if (cls) { td.className = cls; }
      td.textContent = text;
      tr.appendChild(td);
      return td;
    }

    function addRow(f) {
      var tr = document.createElement("tr");
      tr.className = "fresh";
      tr.setAttribute("data-occurrence", f.occurrence_id);
      cell(tr, fmt(new Date()));
      var name = document.createElement("td");
      var a = document.createElement("a");
      a.href = "/ui/occurrences/" + encodeURIComponent(f.occurrence_id);
      a.textContent = f.name || f.event_id;
      name.appendChild(a);
      tr.appendChild(name);
      cell(tr, f.scheduled_at ? fmt(new Date(f.scheduled_at)) : "");
      cell(tr, (f.tags || []).join(", "));
      var st = document.createElement("td");
      var span = document.createElement("span");
      span.className = "badge warn live-status";
      span.textContent = byID[f.occurrence_id] || "fired";
      st.appendChild(span);
      tr.appendChild(st);
      rows.insertBefore(tr, rows.firstChild);
      while (rows.children.length > maxRows) { rows.removeChild(rows.lastChild); }
      empty.hidden = true;
    }

    function setStatus(id, status, code) {
      byID[id] = status;
      var tr = rows.querySelector('tr[data-occurrence="' + CSS.escape(id) + '"]');
      if (!tr) { return; }
      var span = tr.querySelector(".live-status");
      span.textContent = status + (code ? " (HTTP " + code + ")" : "");
      span.className = "badge live-status " + (status === "completed" ? "ok" :
        (status === "failed" || status === "missed" || status === "timed_out") ? "bad" : "warn");
    }

    var es = new EventSource("/ui/live/stream?tags=" + encodeURIComponent(tags));
    es.addEventListener("listening", function (e) {
      var d = JSON.parse(e.data);
      state.textContent = d.all ? "Listening to every event your token can read, tagged or not." :
        "Listening to tags: " + d.tags.join(", ");
      state.setAttribute("data-state", "listening");
    });
    es.addEventListener("fired", function (e) {
      var f = JSON.parse(e.data);
      if (paused) { held.push(f); pauseBtn.textContent = "Resume (" + held.length + " new)"; return; }
      addRow(f);
    });
    es.addEventListener("status", function (e) {
      var d = JSON.parse(e.data);
      setStatus(d.occurrence_id, d.status, d.status_code);
    });
    es.addEventListener("problem", function (e) {
      state.textContent = JSON.parse(e.data).message;
      es.close();
    });
    es.addEventListener("signout", function () {
      es.close();
      window.location.assign("/ui/login?ended=1");
    });
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) { state.textContent = "Disconnected. Reload to reconnect."; }
      else { state.textContent = "Reconnecting…"; }
    };
    pauseBtn.addEventListener("click", function () {
      paused = !paused;
      pauseBtn.setAttribute("aria-pressed", paused ? "true" : "false");
      if (!paused) {
        held.forEach(addRow);
        held.forEach(function (f) { if (byID[f.occurrence_id]) { setStatus(f.occurrence_id, byID[f.occurrence_id]); } });
        held = [];
        pauseBtn.textContent = "Pause";
      } else {
        pauseBtn.textContent = "Resume";
      }
    });
    document.getElementById("live-clear").addEventListener("click", function () {
      rows.textContent = ""; empty.hidden = false;
    });
  }

  // ---- a time field that takes words: the resolved instant before submit ---
  function resolveFields() {
    document.querySelectorAll("input[data-resolve-zone]").forEach(function (input) {
      var out = document.getElementById(input.id + "-resolved");
      var timer = null, seq = 0;
      function run() {
        var mine = ++seq, text = input.value.trim();
        if (!text) { out.hidden = true; return; }
        var body = new URLSearchParams({ text: text, timezone: input.getAttribute("data-resolve-zone") });
        postForm("/ui/resolve-time", body).then(function (d) {
          if (!d || mine !== seq) { return; }
          out.textContent = d.error ? d.error : "Until " + d.shown + " (" + d.utc.replace("T", " ").replace("Z", " UTC") + ")";
          out.setAttribute("data-state", d.error ? "error" : "ok");
          if (d.utc) { out.setAttribute("data-utc", d.utc); } else { out.removeAttribute("data-utc"); }
          out.hidden = false;
        }).catch(function () {
          // No answer (a busy server, a dropped connection): ask again while
          // the text is the same, rather than leave the previous text's
          // answer standing under it.
          if (mine === seq) { timer = setTimeout(run, 1000); }
        });
      }
      input.addEventListener("input", function () {
        // An answer still on its way is for text no longer there.
        clearTimeout(timer); seq++; out.setAttribute("data-state", "pending");
        timer = setTimeout(run, 300);
      });
      if (input.value) { run(); }
    });
  }

  // ---- the Events list: select every row on the page at once ----
  function selectAll() {
    var all = document.getElementById("select-all");
    if (!all) { return; }
    var rows = function () { return document.querySelectorAll("input.row-select"); };
    function sync() {
      var n = 0, boxes = rows();
      boxes.forEach(function (b) { if (b.checked) { n++; } });
      all.checked = n > 0 && n === boxes.length;
      all.indeterminate = n > 0 && n < boxes.length;
    }
    all.addEventListener("change", function () {
      rows().forEach(function (b) { b.checked = all.checked; });
    });
    rows().forEach(function (b) { b.addEventListener("change", sync); });
    sync();
  }

  document.addEventListener("DOMContentLoaded", function () {
    selectAll();
    localTimes(document);
    charts();
    punctualityChart();
    sortableTables();
    punctualityRange();
    preview();
    resolveFields();
    live();
  });
})();
