/// A JSON document written in the order it is built: keys stay where the writer put them, so
/// exports read naturally and are byte-for-byte stable without sorting.
package indirect enum JSONText: Hashable, Sendable {
    case object([(String, JSONText)])
    case array([JSONText])
    case string(String)
    /// A number as JSON writes it: `0`, `-1`, `0.5`.
    case number(String)
    case bool(Bool)
    case null

    package static func number(_ value: Double) -> JSONText { .number(numberText(value)) }
    package static func number(_ value: Int) -> JSONText { .number(String(value)) }

    /// Two-space indentation, one member a line, a newline at the end.
    package var pretty: String {
        var out = ""
        write(to: &out, indentation: "")
        return out + "\n"
    }

    private func write(to out: inout String, indentation: String) {
        let inner = indentation + "  "
        switch self {
        case .object(let members):
            guard !members.isEmpty else {
                out += "{}"
                return
            }
            out += "{\n"
            for (index, member) in members.enumerated() {
                out += inner + jsonString(member.0) + ": "
                member.1.write(to: &out, indentation: inner)
                out += index == members.count - 1 ? "\n" : ",\n"
            }
            out += indentation + "}"
        case .array(let elements):
            guard !elements.isEmpty else {
                out += "[]"
                return
            }
            out += "[\n"
            for (index, element) in elements.enumerated() {
                out += inner
                element.write(to: &out, indentation: inner)
                out += index == elements.count - 1 ? "\n" : ",\n"
            }
            out += indentation + "]"
        case .string(let text): out += jsonString(text)
        case .number(let text): out += text
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        }
    }

    package static func == (lhs: JSONText, rhs: JSONText) -> Bool { lhs.pretty == rhs.pretty }
    package func hash(into hasher: inout Hasher) { hasher.combine(pretty) }
}
