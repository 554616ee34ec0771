import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsJSON

/// One problem found in a catalog: where it is, what was found and what was expected.
///
/// Its description is one line in the compilers' format, so editors can jump to it:
///
/// ```
/// Events/Feed.json:14:21: error: events[3].args.position.type: found "integer", expected one of "string", "int", "double", "bool"
/// ```
package struct CatalogDiagnostic: Error, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Relative to the package root: `Events/Feed.json`.
    package var file: String
    /// The line and column of the value at fault.
    package var position: SourcePosition
    /// The JSON path: `events[3].args.position.type`, `(top level)`, or `JSON syntax`.
    package var path: String
    /// What the file holds there: `"integer"`.
    package var found: String
    /// What would be valid there.
    package var expected: String

    /// Makes a diagnostic.
    ///
    /// - Parameters:
    ///   - file: the catalog's path relative to the package root.
    ///   - position: the line and column of the value at fault.
    ///   - path: the JSON path of the value.
    ///   - found: what the file holds there.
    ///   - expected: what would be valid there.
    package init(file: String, position: SourcePosition, path: String, found: String, expected: String) {
        self.file = file
        self.position = position
        self.path = path
        self.found = found
        self.expected = expected
    }

    init(file: String, position: SourcePosition, path: [JSONPathComponent], found: String, expected: String) {
        self.init(file: file, position: position, path: path.rendered, found: found, expected: expected)
    }

    /// `Events/Feed.json:14:21: error: <path>: found …, expected …`.
    package var description: String {
        "\(file):\(position): error: \(path): found \(found), expected \(expected)"
    }

    /// By file, then position, so that a run's list reads top to bottom; then by text, so that
    /// two problems at one place keep one order.
    ///
    /// - Parameters:
    ///   - lhs: a diagnostic.
    ///   - rhs: another diagnostic.
    /// - Returns: whether `lhs` comes first.
    package static func < (lhs: CatalogDiagnostic, rhs: CatalogDiagnostic) -> Bool {
        (lhs.file, lhs.position.line, lhs.position.column, lhs.path, lhs.found)
            < (rhs.file, rhs.position.line, rhs.position.column, rhs.path, rhs.found)
    }
}
