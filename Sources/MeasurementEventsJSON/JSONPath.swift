import MeasurementEvents

/// One step into a JSON document: an object key or an array index.
package enum JSONPathComponent: Hashable, Sendable {
    case key(String)
    case index(Int)
}

extension Array where Element == JSONPathComponent {
    /// The path as people write it: `events[3].args.position.type`; keys that are not plain
    /// identifiers are bracketed (`args["item-id"]`); the empty path is `(top level)`.
    package var rendered: String {
        if isEmpty { return "(top level)" }
        var text = ""
        for component in self {
            switch component {
            case .index(let index): text += "[\(index)]"
            case .key(let key) where key.isPlainPathKey: text += text.isEmpty ? key : ".\(key)"
            case .key(let key): text += "[\(quoted(key))]"
            }
        }
        return text
    }
}

extension String {
    fileprivate var isPlainPathKey: Bool {
        guard let first = unicodeScalars.first, first == "_" || first.isASCIILetter else { return false }
        return unicodeScalars.allSatisfy { $0 == "_" || $0.isASCIILetter || $0.isASCIIDigit }
    }
}

extension Unicode.Scalar {
    package var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    package var isASCIIDigit: Bool { ("0"..."9").contains(self) }
    package var isASCIILowercaseLetter: Bool { ("a"..."z").contains(self) }
}
