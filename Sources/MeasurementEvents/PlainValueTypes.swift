/// The four value types an observer can read from a posted event's args with
/// `as? [String: Any]`, and a cheap way to tell whether a value is one of them.
///
/// `type(of:)` on an existential calls the runtime (`swift_getDynamicType`), about 90
/// instructions a value, which was most of what a post cost beyond NotificationCenter's own
/// work. An `any EventValueConvertible` container keeps the value's type metadata in the word
/// after its three-word value buffer (the Swift ABI's opaque existential layout); for these
/// four value types, which have no subclasses, that stored type is the dynamic type.
enum PlainValueTypes {
    typealias Metatype = any Any.Type

    /// Whether `type` is `String`, `Int`, `Double` or `Bool`.
    @inline(__always)
    static func contains(_ type: any Any.Type) -> Bool {
        let type = ObjectIdentifier(type)
        return type == ObjectIdentifier(String.self) || type == ObjectIdentifier(Int.self)
            || type == ObjectIdentifier(Double.self) || type == ObjectIdentifier(Bool.self)
    }

    /// The type metadata stored in `value`'s existential container.
    @inline(__always)
    static func storedType(of value: borrowing any EventValueConvertible) -> any Any.Type {
        // `as any …` keeps the argument an existential: a generic parameter would otherwise
        // open it, and the bytes would be the value's, not its container's.
        withUnsafeBytes(of: value as any EventValueConvertible) { container in
            container.load(fromByteOffset: typeOffset, as: Metatype.self)
        }
    }

    /// Whether the container is the documented size (three words of buffer, the type, one
    /// witness table), so that ``storedType(of:)`` reads the type. A constant the compiler
    /// folds: a lazily checked flag cost a `swift_once` call per post. The position of the type
    /// is the Swift ABI's (stable on Apple platforms), and a unit test checks it here.
    @inline(__always)
    static var containerLayoutHolds: Bool {
        MemoryLayout<any EventValueConvertible>.size == typeOffset + 2 * MemoryLayout<UnsafeRawPointer>.size
    }

    /// Three words of inline value buffer come first.
    private static var typeOffset: Int { 3 * MemoryLayout<UnsafeRawPointer>.size }
}
