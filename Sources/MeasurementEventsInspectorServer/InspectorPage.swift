/// The inspector's page: one self-contained HTML file (no external script, font, style or
/// image; nothing is fetched but the inspector's own JSON API), served at `/`.
///
/// Every value from the app or a request is put in the page as text (`textContent`,
/// `createElement`), never as markup; the Content-Security-Policy allows only the page's own
/// script (by nonce) and requests to its own origin, as a second line of defence.
/// The table renders only the rows in view (virtual scrolling), so 10,000 rows stay responsive;
/// new events arrive by polling `GET /api/events?since=<cursor>`, keeping filters, selection
/// and scroll position.
package enum InspectorPage {
    /// The policy sent with the page.
    package static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'unsafe-inline'; connect-src 'self'; "
            + "img-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// The page, its script carrying `nonce`.
    package static func html(nonce: String) -> String {
        template.replacingOccurrences(of: "NONCE_PLACEHOLDER", with: nonce)
    }

    static let template = #"""
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>MeasurementEvents inspector</title>
        <style>
        :root { --bg:#fff; --fg:#1d1d1f; --muted:#6e6e73; --line:#e5e5ea; --sel:#e8f0fe; --bad:#c62828; --warn:#b26a00; --ok:#2e7d32; }
        @media (prefers-color-scheme: dark) { :root { --bg:#1c1c1e; --fg:#f2f2f7; --muted:#a1a1a6; --line:#3a3a3c; --sel:#243447; } }
        * { box-sizing: border-box; }
        body { margin:0; font:13px -apple-system, system-ui, sans-serif; background:var(--bg); color:var(--fg); display:flex; flex-direction:column; height:100vh; }
        header { display:flex; flex-wrap:wrap; gap:6px; align-items:center; padding:8px; border-bottom:1px solid var(--line); }
        header h1 { font-size:15px; margin:0 8px 0 0; }
        input, select, button { font:inherit; padding:3px 6px; }
        #search { min-width:200px; flex:1; }
        #summary { color:var(--muted); }
        main { flex:1; display:flex; min-height:0; }
        #left { flex:2; display:flex; flex-direction:column; min-width:0; border-right:1px solid var(--line); }
        #chart { width:100%; height:70px; border-bottom:1px solid var(--line); display:block; }
        #rows { flex:1; overflow-y:auto; position:relative; }
        #spacer { position:relative; }
        .row { position:absolute; left:0; right:0; height:24px; line-height:24px; display:flex; gap:8px; padding:0 8px; white-space:nowrap; overflow:hidden; cursor:pointer; border-bottom:1px solid var(--line); }
        .row:hover { background:var(--sel); } .row.selected { background:var(--sel); font-weight:600; }
        .row span { overflow:hidden; text-overflow:ellipsis; } .row .time { color:var(--muted); flex:0 0 100px; }
        .row .name { flex:0 0 30%; } .row .source { flex:0 0 76px; color:var(--muted); } .row .status { flex:0 0 150px; }
        .row .args { flex:1 1 auto; min-width:0; color:var(--muted); }
        .s-forwarded, .s-received { color:var(--ok); } .s-filtered_out, .s-held { color:var(--warn); }
        .s-dropped, .s-malformed, .s-discarded_by_processor, .s-discarded_without_consent { color:var(--bad); }
        #right { flex:1; display:flex; flex-direction:column; min-width:260px; overflow:auto; }
        #detail { padding:8px; } #detail h2 { font-size:14px; margin:4px 0; word-break:break-all; }
        #detail dl { display:grid; grid-template-columns:max-content 1fr; gap:2px 8px; margin:0; } #detail dt { color:var(--muted); } #detail dd { margin:0; word-break:break-all; }
        pre { background:rgba(127,127,127,.12); padding:6px; overflow:auto; max-height:320px; white-space:pre-wrap; word-break:break-all; }
        .finding { color:var(--warn); } .violation { color:var(--bad); }
        #counts { padding:8px; border-top:1px solid var(--line); } #counts li { list-style:none; display:flex; justify-content:space-between; gap:8px; }
        #counts ul { padding:0; margin:0; }
        @media (max-width: 760px) { main { flex-direction:column; } #left { border-right:0; } #right { max-height:45vh; } }
        </style></head>
        <body>
        <header>
          <h1>Events</h1>
          <input id="search" data-testid="search" type="search" placeholder="Search names and arg values" aria-label="Search">
          <select id="f-status" data-testid="filter-status" aria-label="Status"><option value="">all statuses</option></select>
          <select id="f-module" data-testid="filter-module" aria-label="Module"><option value="">all modules</option></select>
          <select id="f-type" data-testid="filter-type" aria-label="Type"><option value="">all types</option></select>
          <select id="f-tracker" data-testid="filter-tracker" aria-label="Tracker"><option value="">all trackers</option></select>
          <button id="pause" data-testid="pause" type="button">Pause</button>
          <button id="reset" data-testid="reset" type="button">Clear</button>
          <span id="summary" data-testid="summary"></span>
        </header>
        <main>
          <section id="left">
            <canvas id="chart" data-testid="chart" height="70" aria-label="Events over time"></canvas>
            <div id="rows" data-testid="rows" tabindex="0"><div id="spacer"></div></div>
          </section>
          <aside id="right">
            <div id="detail" data-testid="detail"><p>Select an event to see what was decided about it and what each vendor gets.</p></div>
            <div id="counts" data-testid="counts"><strong>Per name</strong><ul id="count-list"></ul></div>
          </aside>
        </main>
        <script nonce="NONCE_PLACEHOLDER">
        "use strict";
        const ROW = 24, MAX = 20000;
        const all = []; let cursor = 0, paused = false, selected = null, visible = [], evicted = 0;
        const $ = (id) => document.getElementById(id);
        const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
        const filters = { status: $("f-status"), module: $("f-module"), type: $("f-type"), tracker: $("f-tracker") };
        const known = { status: new Set(), module: new Set(), type: new Set(), tracker: new Set() };
        function trackersOf(e) { const t = e.trackers.map((x) => x.tracker); if (e.source !== "app") t.push(e.source); return t; }
        function remember(kind, value) {
          if (!value || known[kind].has(value)) return; known[kind].add(value);
          const o = el("option", value); o.value = value; filters[kind].appendChild(o);
        }
        function matches(e) {
          const q = $("search").value.trim().toLowerCase();
          if (filters.status.value && e.status !== filters.status.value) return false;
          if (filters.module.value && e.module !== filters.module.value) return false;
          if (filters.type.value && e.type !== filters.type.value) return false;
          if (filters.tracker.value && !trackersOf(e).includes(filters.tracker.value)) return false;
          if (!q) return true;
          if (e.name.toLowerCase().includes(q)) return true;
          for (const k in e.args) { if (String(e.args[k]).toLowerCase().includes(q) || k.toLowerCase().includes(q)) return true; }
          return false;
        }
        function refilter() { visible = all.filter(matches); render(true); }
        function argsText(e) { return Object.keys(e.args).sort().map((k) => k + "=" + e.args[k]).join("  "); }
        function time(e) { const d = new Date((e.timestamp || e.receivedAt) * 1000); return d.toLocaleTimeString([], { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0"); }
        function render(force) {
          const box = $("rows"), spacer = $("spacer");
          spacer.style.height = (visible.length * ROW) + "px";
          const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 5), last = Math.min(visible.length, first + Math.ceil(box.clientHeight / ROW) + 10);
          const rows = [];
          for (let i = first; i < last; i++) {
            const e = visible[i], r = el("div", undefined, "row" + (selected && selected.seq === e.seq ? " selected" : ""));
            r.style.top = (i * ROW) + "px"; r.dataset.seq = String(e.seq); r.setAttribute("data-testid", "row");
            r.append(el("span", time(e), "time"), el("span", e.name, "name"), el("span", e.source, "source"), el("span", e.status.replace(/_/g, " "), "status s-" + e.status), el("span", argsText(e), "args"));
            rows.push(r);
          }
          spacer.replaceChildren(...rows);
          $("summary").textContent = visible.length + " shown of " + all.length + " kept" + (evicted ? ", " + evicted + " evicted" : "") + (paused ? " (paused)" : "");
          if (force) { counts(); chart(); }
        }
        function counts() {
          const per = new Map(); for (const e of visible) per.set(e.name, (per.get(e.name) || 0) + 1);
          const items = [...per.entries()].sort((a, b) => b[1] - a[1]).slice(0, 200).map(([n, c]) => { const li = el("li"); li.append(el("span", n), el("span", c)); return li; });
          $("count-list").replaceChildren(...items);
        }
        function chart() {
          const c = $("chart"), w = c.clientWidth || 600; c.width = w; const g = c.getContext("2d"); g.clearRect(0, 0, w, c.height);
          if (!visible.length) return;
          const buckets = 60, end = Date.now() / 1000, span = Math.max(60, end - (visible[0].receivedAt || end)), size = span / buckets, n = new Array(buckets).fill(0);
          for (const e of visible) { const b = Math.floor(((e.receivedAt || end) - (end - span)) / size); n[Math.min(buckets - 1, Math.max(0, b))]++; }
          const top = Math.max(...n), bw = w / buckets; g.fillStyle = "#0a84ff";
          n.forEach((v, i) => { const h = top ? (v / top) * (c.height - 12) : 0; g.fillRect(i * bw + 1, c.height - h, bw - 2, h); });
          g.fillStyle = "#888"; g.font = "10px sans-serif"; g.fillText("events over the last " + Math.round(span) + " s (max " + top + " per bar)", 4, 10);
        }
        function section(parent, title, text, cls) { parent.append(el("h3", title)); const p = el("pre", text, cls); parent.append(p); return p; }
        function show(e) {
          selected = e; const d = $("detail"); d.replaceChildren();
          d.append(el("h2", e.name));
          const dl = el("dl");
          const add = (k, v) => { if (v === null || v === undefined || v === "") return; dl.append(el("dt", k), el("dd", v)); };
          add("status", e.status.replace(/_/g, " ") + (e.reason ? ": " + e.reason : "")); add("source", e.source); add("type", e.type); add("category", e.category); add("label", e.label);
          add("module", e.module); add("time", time(e)); add("id", e.id);
          for (const k of Object.keys(e.args).sort()) add("arg " + k, e.args[k]);
          if (e.purposes) add("purposes", Object.keys(e.purposes).sort().map((k) => k + " " + e.purposes[k]).join(", "));
          d.append(dl);
          if (e.catalog) { d.append(el("h3", "Catalog (" + e.catalog.module + ")")); d.append(el("p", e.catalog.description)); const ul = el("ul"); for (const r of e.catalog.rules) ul.append(el("li", r)); d.append(ul); }
          for (const v of e.violations) d.append(el("p", "plan: " + v.message + (v.file ? " (" + v.file + (v.line ? ":" + v.line : "") + ")" : ""), "violation"));
          for (const f of e.findings) d.append(el("p", "vendor limit: " + f, "finding"));
          for (const t of e.trackers) {
            const who = t.destination && t.destination !== t.tracker ? t.destination + " (" + t.tracker + ")" : t.tracker;
            if (t.forwarded === false) { const p = el("p", who + ": " + t.decision, "decision"); p.setAttribute("data-testid", "destination-decision"); d.append(p); continue; }
            const p = section(d, who + (t.error ? " — error: " + t.error : ""), t.body || "(the tracker does not show its body)"); p.setAttribute("data-testid", "vendor-body");
          }
          if (e.vendorBody) { const p = section(d, "Body received (" + e.source + ")", e.vendorBody); p.setAttribute("data-testid", "vendor-body"); }
          render(false);
        }
        $("rows").addEventListener("scroll", () => render(false));
        $("rows").addEventListener("click", (ev) => { const r = ev.target.closest(".row"); if (!r) return; const e = visible.find((x) => String(x.seq) === r.dataset.seq); if (e) show(e); });
        $("search").addEventListener("input", refilter);
        for (const k in filters) filters[k].addEventListener("change", refilter);
        $("pause").addEventListener("click", () => { paused = !paused; $("pause").textContent = paused ? "Resume" : "Pause"; render(false); });
        $("reset").addEventListener("click", async () => {
          await fetch("api/reset", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
          all.length = 0; visible = []; selected = null; $("detail").replaceChildren(el("p", "Cleared.")); render(true);
        });
        window.addEventListener("resize", () => render(true));
        async function poll() {
          try {
            if (!paused) {
              const r = await fetch("api/events?since=" + cursor); const page = await r.json();
              if (page.cursor < cursor) { all.length = 0; }
              cursor = page.cursor; evicted = page.evicted;
              if (page.events.length) {
                const box = $("rows"), atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - ROW;
                for (const e of page.events) { all.push(e); remember("status", e.status); remember("module", e.module); remember("type", e.type); for (const t of trackersOf(e)) remember("tracker", t); if (matches(e)) visible.push(e); }
                if (all.length > MAX) { const cut = all.length - MAX; all.splice(0, cut); visible = all.filter(matches); }
                render(true);
                if (atBottom) box.scrollTop = box.scrollHeight;
              }
            }
          } catch (error) { $("summary").textContent = "inspector not reachable: " + error; }
          setTimeout(poll, 1000);
        }
        render(true); poll();
        </script>
        </body></html>
        """#
}
