// Qhronos console: progressive enhancement over server-rendered pages.
// Times in the viewer's zone, charts, the event form's live preview and the
// Live page. No inline script anywhere (strict CSP); text is always set with
// textContent, never parsed as HTML.
(function () {
  "use strict";

  var fmt = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
  });

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (!isNaN(d)) {
        el.textContent = fmt.format(d);
      }
    });
  }

  function csrf() {
    var m = document.getElementById("main");
    return m ? m.getAttribute("data-csrf") : "";
  }

  // ---- charts (uPlot) -------------------------------------------------------
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
          {},
          { label: "completed/min", stroke: "#116b35", width: 2, scale: "n" },
          { label: "failed/min", stroke: "#a4161a", width: 2, scale: "n" },
          { label: "lateness p50 ms", stroke: "#1456c8", dash: [4, 4], scale: "ms" },
          { label: "lateness p99 ms", stroke: "#7a4b00", dash: [2, 3], scale: "ms" }
        ],
        axes: [{}, { scale: "n", label: "per min" }, { scale: "ms", side: 1, label: "ms", grid: { show: false } }],
        scales: { n: { range: function (u, min, max) { return [0, Math.max(1, max)]; } } }
      };
      var plot = new uPlot(opts, [d.x, d.completed, d.failed, d.p50, d.p99], el);
      window.addEventListener("resize", function () {
        plot.setSize({ width: Math.max(260, el.clientWidth), height: 220 });
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

    function fieldErrors(field, msg) {
      form.querySelectorAll("[data-error-for]").forEach(function (p) {
        if (p.getAttribute("data-error-for") === field) {
          p.textContent = msg; p.hidden = false;
        } else if (p.getAttribute("data-live")) {
          p.textContent = ""; p.hidden = true;
        }
        if (p.getAttribute("data-error-for") === field) { p.setAttribute("data-live", "1"); }
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
      fetch("/ui/preview", {
        method: "POST", credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf(), "Content-Type": "application/x-www-form-urlencoded" },
        body: body.toString()
      }).then(function (res) {
        if (res.status === 401) { window.location.assign("/ui/login?ended=1"); return null; }
        return res.json();
      }).then(function (data) {
        if (!data || mine !== seq) { return; }
        list.textContent = "";
        if (data.error) {
          errEl.textContent = data.error; errEl.hidden = false;
          clearLiveErrors();
          if (data.field) { fieldErrors(data.field, data.error); }
          empty.hidden = true;
          return;
        }
        errEl.hidden = true; clearLiveErrors();
        var inZone = fmt;
        if (data.timezone) {
          zoneEl.textContent = "In " + data.timezone + " (the event's zone); hover for UTC.";
          try {
            inZone = new Intl.DateTimeFormat(undefined, { timeZone: data.timezone, weekday: "short",
              year: "numeric", month: "short", day: "2-digit", hour: "2-digit", minute: "2-digit",
              timeZoneName: "short" });
          } catch (e) { inZone = fmt; }
        }
        (data.instants || []).forEach(function (i) {
          var li = document.createElement("li");
          li.textContent = inZone.format(new Date(i.utc));
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
            tag(li, "rolled from " + inZone.format(new Date(i.original)));
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
      cell(tr, fmt.format(new Date()));
      var name = document.createElement("td");
      var a = document.createElement("a");
      a.href = "/ui/occurrences/" + encodeURIComponent(f.occurrence_id);
      a.textContent = f.name || f.event_id;
      name.appendChild(a);
      tr.appendChild(name);
      cell(tr, f.scheduled_at ? fmt.format(new Date(f.scheduled_at)) : "");
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
        (status === "failed" || status === "missed") ? "bad" : "warn");
    }

    var es = new EventSource("/ui/live/stream?tags=" + encodeURIComponent(tags));
    es.addEventListener("listening", function (e) {
      var d = JSON.parse(e.data);
      state.textContent = "Listening to tags: " + d.tags.join(", ");
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

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    charts();
    preview();
    live();
  });
})();
