/// A line and column in a source file, both counted from 1; columns count Unicode scalars.
package struct SourcePosition: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var line: Int
    package var column: Int

    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    package static func < (lhs: SourcePosition, rhs: SourcePosition) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }

    /// `12:5`
    package var description: String { "\(line):\(column)" }
}
