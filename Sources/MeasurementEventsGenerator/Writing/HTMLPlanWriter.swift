import MeasurementEvents
import MeasurementEventsAggregator

/// The tracking plan as one self-contained HTML page people can browse: every event by module
/// with its description, type, args and their rules, personal-data and deprecation marks,
/// owner, the destinations it is limited to, and test coverage when given; a search box and
/// filters by module, type, personal data and deprecation.
///
/// Everything is inline (styles, script, no font, image or link to fetch), so the file works
/// opened from disk, attached to a ticket, or offline.
enum HTMLPlanWriter {
    static func page(_ catalogs: [Catalog], coverage: PlanCoverage?) -> String {
        let catalogs = catalogs.sorted { $0.module < $1.module }
        let eventCount = catalogs.reduce(0) { $0 + $1.events.count }
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Tracking plan</title>
            <style>
            \(style)
            </style>
            </head>
            <body>
            <h1>Tracking plan</h1>
            <p class="summary">\(catalogs.count) modules, \(eventCount) events.
            """
        if let coverage { out += " " + escaped(coverage.summary.split(separator: "\n").first.map(String.init) ?? "") }
        out += "</p>\n"
        out += filters(catalogs, hasCoverage: coverage != nil)
        out += "<p id=\"count\" aria-live=\"polite\">\(eventCount) of \(eventCount) events shown</p>\n"
        out +=
            "<table id=\"plan\">\n<thead><tr><th>Event</th><th>Module</th><th>Type</th><th>Description</th><th>Args</th>"
        if coverage != nil { out += "<th>Coverage</th>" }
        out += "</tr></thead>\n"
        for catalog in catalogs {
            out += "<tbody class=\"module\" data-module=\"\(escaped(catalog.module))\">\n"
            let colspan = coverage == nil ? 5 : 6
            out +=
                "<tr class=\"module-heading\"><th colspan=\"\(colspan)\">\(escaped(catalog.module))"
                + (catalog.description.map { " <span class=\"note\">— \(escaped($0))</span>" } ?? "")
                + " <span class=\"note\">(\(escaped(catalog.path)))</span></th></tr>\n"
            for event in catalog.events { out += row(event, module: catalog.module, coverage: coverage) }
            out += "</tbody>\n"
        }
        out += "</table>\n<script>\n\(script)\n</script>\n</body>\n</html>\n"
        return out
    }

    private static func filters(_ catalogs: [Catalog], hasCoverage: Bool) -> String {
        var out = "<form id=\"filters\" onsubmit=\"return false\">\n"
        out +=
            "<label>Search <input id=\"search\" type=\"search\" placeholder=\"name, arg, owner…\" autocomplete=\"off\"></label>\n"
        out += "<label>Module <select id=\"filter-module\"><option value=\"\">All</option>"
        for catalog in catalogs { out += "<option>\(escaped(catalog.module))</option>" }
        out += "</select></label>\n<label>Type <select id=\"filter-type\"><option value=\"\">All</option>"
        for type in EventType.allCases { out += "<option>\(type.name)</option>" }
        out += "</select></label>\n"
        out += "<label><input id=\"filter-pii\" type=\"checkbox\"> With personal data only</label>\n"
        out += "<label><input id=\"filter-deprecated\" type=\"checkbox\"> Hide deprecated</label>\n"
        if hasCoverage { out += "<label><input id=\"filter-uncovered\" type=\"checkbox\"> Never posted only</label>\n" }
        return out + "</form>\n"
    }

    private static func row(_ event: CatalogEvent, module: String, coverage: PlanCoverage?) -> String {
        let hasPII = event.args.contains(where: \.isPersonalData)
        let isPosted = coverage?.posted.contains(event.name)
        var searchable = [
            event.name, module, event.type.name, event.description, event.owner ?? "", event.category ?? "",
        ]
        searchable += event.destinations ?? []
        searchable += event.args.flatMap { [$0.name, $0.description] }
        var out = "<tr class=\"event\" data-module=\"\(escaped(module))\" data-type=\"\(event.type.name)\""
        out += " data-pii=\"\(hasPII)\" data-deprecated=\"\(event.deprecation != nil)\""
        if let isPosted { out += " data-posted=\"\(isPosted)\"" }
        out += " data-search=\"\(escaped(searchable.joined(separator: " ").lowercased()))\">"
        out += "<td><code>\(escaped(event.name))</code>"
        if let deprecation = event.deprecation {
            out += " <span class=\"badge deprecated\">deprecated</span>"
            if let replacement = deprecation.replacement {
                out += "<div class=\"note\">use <code>\(escaped(replacement))</code></div>"
            }
        }
        if hasPII { out += " <span class=\"badge pii\">PII</span>" }
        out += "</td><td>\(escaped(module))</td><td>\(event.type.name)</td>"
        out += "<td>\(escaped(event.description))"
        var notes: [String] = []
        if let category = event.category { notes.append("category: \(escaped(category))") }
        if let owner = event.owner { notes.append("owner: <span class=\"owner\">\(escaped(owner))</span>") }
        if let since = event.since { notes.append("since \(escaped(since))") }
        if let destinations = event.destinations {
            notes.append(
                "only to: "
                    + destinations.map { "<code class=\"destination\">\(escaped($0))</code>" }.joined(separator: ", "))
        }
        if !notes.isEmpty { out += "<div class=\"note\">\(notes.joined(separator: " · "))</div>" }
        out += "</td><td>"
        if event.args.isEmpty {
            out += "<span class=\"note\">none</span>"
        } else {
            out += "<ul class=\"args\">"
            for arg in event.args {
                out += "<li><code>\(escaped(arg.name))</code>: \(arg.type.rawValue)"
                if arg.isOptional { out += " <span class=\"note\">optional</span>" }
                if arg.isPersonalData { out += " <span class=\"badge pii\">PII</span>" }
                let rules = arg.rulesSummary
                if !rules.isEmpty { out += "<div class=\"rules\">\(escaped(rules))</div>" }
                out += "<div class=\"note\">\(escaped(arg.description))</div></li>"
            }
            out += "</ul>"
        }
        out += "</td>"
        if let isPosted {
            out += isPosted ? "<td class=\"posted\">posted</td>" : "<td class=\"never\">never posted</td>"
        }
        return out + "</tr>\n"
    }

    /// Text as HTML: `&`, `<`, `>` and quotes escaped, so catalog text cannot become markup.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    private static let style = """
        body { font: 14px/1.4 -apple-system, system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
        h1 { font-size: 1.6em; margin: 0 0 .2em; }
        #filters { display: flex; flex-wrap: wrap; gap: .6em 1.2em; margin: 1em 0 .4em; align-items: center; }
        #search { width: 18em; padding: .25em .4em; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; vertical-align: top; padding: .35em .5em; border-bottom: 1px solid #ddd; }
        thead th { background: #f2f2f5; position: sticky; top: 0; }
        .module-heading th { background: #e8eefc; font-size: 1.05em; }
        code { font-family: ui-monospace, Menlo, monospace; font-size: .95em; }
        .note { color: #666; font-size: .9em; }
        .rules { color: #2a5d2a; font-size: .9em; }
        .badge { border-radius: 3px; padding: 0 .35em; font-size: .8em; font-weight: 600; }
        .badge.pii { background: #fde2e1; color: #a40e26; }
        .badge.deprecated { background: #eee; color: #555; text-decoration: line-through; }
        ul.args { margin: 0; padding-left: 1.1em; }
        td.posted { color: #1a7f37; } td.never { color: #a40e26; font-weight: 600; }
        tr.hidden, tbody.hidden { display: none; }
        """

    private static let script = """
        (function () {
          var search = document.getElementById('search');
          var module = document.getElementById('filter-module');
          var type = document.getElementById('filter-type');
          var pii = document.getElementById('filter-pii');
          var deprecated = document.getElementById('filter-deprecated');
          var uncovered = document.getElementById('filter-uncovered');
          var count = document.getElementById('count');
          var rows = Array.prototype.slice.call(document.querySelectorAll('tr.event'));
          function apply() {
            var words = search.value.toLowerCase().split(/\\s+/).filter(function (w) { return w.length > 0; });
            var shown = 0;
            rows.forEach(function (row) {
              var d = row.dataset;
              var visible = words.every(function (w) { return d.search.indexOf(w) >= 0; })
                && (!module.value || d.module === module.value)
                && (!type.value || d.type === type.value)
                && (!pii.checked || d.pii === 'true')
                && (!deprecated.checked || d.deprecated === 'false')
                && (!uncovered || !uncovered.checked || d.posted === 'false');
              row.classList.toggle('hidden', !visible);
              if (visible) { shown += 1; }
            });
            Array.prototype.forEach.call(document.querySelectorAll('tbody.module'), function (body) {
              body.classList.toggle('hidden', body.querySelectorAll('tr.event:not(.hidden)').length === 0);
            });
            count.textContent = shown + ' of ' + rows.length + ' events shown';
          }
          [search, module, type, pii, deprecated, uncovered].forEach(function (control) {
            if (control) { control.addEventListener('input', apply); control.addEventListener('change', apply); }
          });
          apply();
        })();
        """
}
