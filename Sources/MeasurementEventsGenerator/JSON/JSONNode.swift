/// A line and column in a source file, both counted from 1; columns count Unicode scalars.
public struct SourcePosition: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static func < (lhs: SourcePosition, rhs: SourcePosition) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }

    /// `12:5`
    public var description: String { "\(line):\(column)" }
}

/// A parsed JSON value that remembers where it started and, for objects, the order of its keys.
///
/// Catalogs need both: arg order in the file is the order of generated parameters, and every
/// problem is reported with a line and column.
public struct JSONNode: Hashable, Sendable {
    public indirect enum Value: Hashable, Sendable {
        case object([Member])
        case array([JSONNode])
        case string(String)
        /// The number's text as written, so that `1` and `1.0` stay distinguishable.
        case number(String)
        case bool(Bool)
        case null
    }

    /// One key of an object, in file order, with the position of the key itself.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var keyPosition: SourcePosition
        public var value: JSONNode

        public init(key: String, keyPosition: SourcePosition, value: JSONNode) {
            self.key = key
            self.keyPosition = keyPosition
            self.value = value
        }
    }

    public var value: Value
    public var position: SourcePosition

    public init(value: Value, position: SourcePosition) {
        self.value = value
        self.position = position
    }

    /// How a value is named in "found …" messages: `a number (3)`, `an array`, `"text"`.
    public var summary: String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        case .string(let text): return quoted(text)
        case .number(let text): return "a number (\(text))"
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        }
    }
}

/// `"text"` with quotes and backslashes escaped, long texts shortened; used in messages.
func quoted(_ text: String) -> String {
    var shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
    shown = shown.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    shown = shown.replacingOccurrences(of: "\n", with: "\\n")
    return "\"\(shown)\""
}
