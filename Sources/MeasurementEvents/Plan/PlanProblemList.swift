import Foundation

/// Problems collected while reading one file, given positions at the end.
struct ProblemList {
    private struct Entry {
        var offset: Int
        var path: String
        var message: String
        var severity: TrackingPlanProblem.Severity
    }

    let file: String
    let data: Data
    private var entries: [Entry] = []

    init(file: String, data: Data) {
        self.file = file
        self.data = data
    }

    var isEmpty: Bool { entries.isEmpty }
    var hasErrors: Bool { entries.contains { $0.severity == .error } }

    mutating func add(_ path: String, at offset: Int, _ message: String, severity: TrackingPlanProblem.Severity = .error) {
        entries.append(Entry(offset: offset, path: path, message: message, severity: severity))
    }

    /// The problems in file order (stable for problems at the same place).
    var sorted: [TrackingPlanProblem] {
        entries.enumerated()
            .sorted { ($0.element.offset, $0.offset) < ($1.element.offset, $1.offset) }
            .map { _, entry in
                let position = PlanJSONReader.position(of: entry.offset, in: data)
                return TrackingPlanProblem(
                    file: file, path: entry.path, line: position.line, column: position.column,
                    message: entry.message, severity: entry.severity)
            }
    }

    /// "line 4, column 5", for "first at …" messages.
    func place(of offset: Int) -> String {
        let position = PlanJSONReader.position(of: offset, in: data)
        return "line \(position.line), column \(position.column)"
    }
}
