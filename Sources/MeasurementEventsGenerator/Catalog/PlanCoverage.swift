import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Which planned events a test run posted: read from the coverage files the test kit writes
/// (one posted event name a line; `#` starts a comment), compared with the catalogs.
///
/// ```
/// 37 of 42 planned events posted by tests (88%); never posted: feed/closed, settings/reset, …
/// ```
package struct PlanCoverage: Hashable, Sendable {
    /// Every planned event name, modules by name, events in catalog order.
    package var planned: [String]
    /// Every name the files list.
    package var posted: Set<String>

    package init(catalogs: [Catalog], posted: Set<String>) {
        planned = catalogs.sorted { $0.module < $1.module }.flatMap { $0.events.map(\.name) }
        self.posted = posted
    }

    /// Planned events that no test posted, in plan order.
    package var neverPosted: [String] { planned.filter { !posted.contains($0) } }
    /// Names the tests posted that no catalog plans, sorted.
    package var unplanned: [String] { posted.subtracting(planned).sorted() }
    /// Planned events posted, from 0 to 100; 100 for an empty plan.
    package var percent: Double {
        planned.isEmpty ? 100 : Double(planned.count - neverPosted.count) * 100 / Double(planned.count)
    }

    /// `37 of 42 planned events posted by tests (88%); never posted: …`
    package var summary: String {
        let covered = planned.count - neverPosted.count
        let whole = Int(percent.rounded(.down))  // fits: from 0 to 100
        var text = "\(covered) of \(planned.count) planned events posted by tests (\(whole)%)"
        text +=
            neverPosted.isEmpty
            ? "; every planned event was posted" : "; never posted: " + neverPosted.joined(separator: ", ")
        if !unplanned.isEmpty { text += "\nposted but not planned: " + unplanned.joined(separator: ", ") }
        return text
    }

    /// The names listed in coverage files.
    ///
    /// - Throws: ``GeneratorError`` naming the file (and line) that cannot be read or holds
    ///   something other than event names.
    package static func postedNames(in files: [URL]) throws(GeneratorError) -> Set<String> {
        var names: Set<String> = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw GeneratorError("cannot read the coverage file \(file.path)")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw GeneratorError(
                    "\(file.path): found bytes that are not UTF-8, expected a coverage file (one event name a line)")
            }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let name = line.trimmingCharacters(in: .whitespaces)
                if name.isEmpty || name.hasPrefix("#") { continue }
                guard CatalogReader.isEventName(name) else {
                    throw GeneratorError(
                        "\(file.path):\(index + 1): found \(quoted(name)), expected an event name a line (a coverage file the test kit writes)"
                    )
                }
                names.insert(name)
            }
        }
        return names
    }
}
