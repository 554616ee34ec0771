import MeasurementEvents

/// A parsed JSON value that remembers where it started and, for objects, the order of its keys.
///
/// Catalogs need both: arg order in the file is the order of generated parameters, and every
/// problem is reported with a line and column.
package struct JSONNode: Sendable {
    package indirect enum Value: Sendable {
        case object([Member])
        case array([JSONNode])
        case string(String)
        /// The number's text as written, so that `1` and `1.0` stay distinguishable.
        case number(String)
        case bool(Bool)
        case null
    }

    /// One key of an object, in file order, with the position of the key itself.
    package struct Member: Sendable {
        package var key: String
        package var keyPosition: SourcePosition
        package var value: JSONNode

        package init(key: String, keyPosition: SourcePosition, value: JSONNode) {
            self.key = key
            self.keyPosition = keyPosition
            self.value = value
        }
    }

    package var value: Value
    package var position: SourcePosition

    package init(value: Value, position: SourcePosition) {
        self.value = value
        self.position = position
    }

    /// How a value is named in "found …" messages: `a number (3)`, `an array`, `"text"`.
    package var summary: String {
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
