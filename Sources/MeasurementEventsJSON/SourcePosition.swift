/// A line and column in a source file, both counted from 1; columns count Unicode scalars.
package struct SourcePosition: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The line, from 1.
    package var line: Int
    /// The column, from 1, in characters.
    package var column: Int

    /// A position.
    ///
    /// - Parameters:
    ///   - line: the line, from 1.
    ///   - column: the column, from 1, in characters.
    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// Whether `lhs` comes before `rhs` in the file: by line, then by column.
    ///
    /// - Parameters:
    ///   - lhs: a position.
    ///   - rhs: another position.
    /// - Returns: `true` when `lhs` comes first.
    package static func < (lhs: SourcePosition, rhs: SourcePosition) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }

    /// `12:5`
    package var description: String { "\(line):\(column)" }
}
