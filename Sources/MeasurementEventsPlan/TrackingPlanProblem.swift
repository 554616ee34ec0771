/// One thing wrong (or worth a warning) in a tracking plan or catalog file.
///
/// Its description is one line, `file:line:column: path: message`:
///
/// ```
/// tracking-plan.json:7:18: $.screens.Feed: found an empty label, expected a non-empty string
/// ```
public struct TrackingPlanProblem: Sendable, Equatable, CustomStringConvertible {
    /// Whether a problem rejects the file.
    public enum Severity: Sendable, Equatable {
        /// Rejects the file.
        case error
        /// Reported, the file is still used (an undeclared event name in lenient mode).
        case warning
    }

    /// The file's name as given to the loader.
    public let file: String
    /// Where in the JSON: `$.events["feed/item_tapped"].label`.
    public let path: String
    /// 1-based, in characters; `nil` when the problem is not about one place (an unreadable file).
    public let line: Int?
    /// 1-based, in characters; `nil` with ``line``.
    public let column: Int?
    /// What was found and what was expected.
    public let message: String
    /// Whether the problem rejects the file.
    public let severity: Severity

    /// A problem.
    ///
    /// - Parameters:
    ///   - file: the file's name as given to the loader.
    ///   - path: where in the JSON.
    ///   - line: the line, from 1.
    ///   - column: the column, from 1.
    ///   - message: what was found and what was expected.
    ///   - severity: whether it rejects the file.
    public init(file: String, path: String, line: Int?, column: Int?, message: String, severity: Severity = .error) {
        self.file = file
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        self.severity = severity
    }

    /// `file:line:column: path: message`, the way compilers print problems.
    public var description: String {
        var text = file
        if let line, let column { text += ":\(line):\(column)" }
        text += ": "
        if severity == .warning { text += "warning: " }
        return text + "\(path): \(message)"
    }
}

/// A tracking plan or catalog that was rejected, with every problem found in it (warnings
/// included), in file order. Nothing of a rejected file is applied.
public struct TrackingPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every problem found, warnings included, in file order.
    public let problems: [TrackingPlanProblem]

    /// An error listing `problems`.
    ///
    /// - Parameter problems: the problems, in file order.
    public init(problems: [TrackingPlanProblem]) {
        self.problems = problems
    }

    /// The problems that rejected the file.
    public var errors: [TrackingPlanProblem] { problems.filter { $0.severity == .error } }

    /// Every problem, one a line.
    public var description: String {
        let count = errors.count
        let file = problems.first?.file ?? "tracking plan"
        return "\(file) was rejected with \(count) error\(count == 1 ? "" : "s"):\n"
            + problems.map { "  \($0)" }.joined(separator: "\n")
    }
}
