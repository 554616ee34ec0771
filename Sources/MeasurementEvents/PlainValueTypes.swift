/// The four value types an observer can read from a posted event's args with
/// `as? [String: Any]`, and a cheap way to tell whether a value is one of them.
enum PlainValueTypes {
    /// Whether `type` is `String`, `Int`, `Double` or `Bool`.
    @inline(__always)
    static func contains(_ type: any Any.Type) -> Bool {
        let type = ObjectIdentifier(type)
        return type == ObjectIdentifier(String.self) || type == ObjectIdentifier(Int.self)
            || type == ObjectIdentifier(Double.self) || type == ObjectIdentifier(Bool.self)
    }
}
