import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
internal import MeasurementEventsJSON

/// Problems collected while reading one file, given positions at the end.
struct ProblemList {
    private struct Entry {
        var position: SourcePosition
        var path: String
        var message: String
        var severity: TrackingPlanProblem.Severity
    }

    let file: String
    private var entries: [Entry] = []

    init(file: String) {
        self.file = file
    }

    var isEmpty: Bool { entries.isEmpty }
    var hasErrors: Bool { entries.contains { $0.severity == .error } }

    mutating func add(
        _ path: String, at position: SourcePosition, _ message: String, severity: TrackingPlanProblem.Severity = .error
    ) {
        entries.append(Entry(position: position, path: path, message: message, severity: severity))
    }

    /// The problems in file order (stable for problems at the same place).
    var sorted: [TrackingPlanProblem] {
        entries.enumerated()
            .sorted { ($0.element.position, $0.offset) < ($1.element.position, $1.offset) }
            .map { _, entry in
                TrackingPlanProblem(
                    file: file, path: entry.path, line: entry.position.line, column: entry.position.column,
                    message: entry.message, severity: entry.severity)
            }
    }

    /// "line 4, column 5", for "first at …" messages.
    func place(of position: SourcePosition) -> String {
        "line \(position.line), column \(position.column)"
    }
}
