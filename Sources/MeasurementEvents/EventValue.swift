import Foundation

/// A scalar argument value: the only kinds of value an event may carry.
///
/// Literals work directly: `["item_id": "42", "position": 3, "ratio": 0.5, "promoted": true]`.
public enum EventValue: Hashable, Sendable, CustomStringConvertible {
    /// A string.
    case string(String)
    /// An integer.
    case int(Int)
    /// A finite floating-point number.
    case double(Double)
    /// A boolean.
    case bool(Bool)

    /// The value as messages show it.
    public var description: String {
        switch self {
        case .string(let value): return value
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return value ? "true" : "false"
        }
    }

    /// The plain Foundation value that travels in a notification's userInfo.
    public var plainValue: Any { plainConvertible }

    /// The plain `String`, `Int`, `Double` or `Bool` inside, typed for a post's args.
    var plainConvertible: any EventValueConvertible {
        switch self {
        case .string(let value): return value
        case .int(let value): return value
        case .double(let value): return value
        case .bool(let value): return value
        }
    }

    /// The string, or `nil` for any other kind of value.
    public var stringValue: String? { if case .string(let value) = self { return value } else { return nil } }
    /// The integer, or `nil` for any other kind of value.
    public var intValue: Int? { if case .int(let value) = self { return value } else { return nil } }
    /// The value as a `Double`; integers convert, since JSON and vendors do not tell them apart.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): return value
        case .int(let value): return Double(value)
        default: return nil
        }
    }
    /// The boolean, or `nil` for any other kind of value.
    public var boolValue: Bool? { if case .bool(let value) = self { return value } else { return nil } }
}

extension EventValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    /// A string value from a literal.
    ///
    /// - Parameter value: the string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value from a literal.
    ///
    /// - Parameter value: the integer.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A floating-point value from a literal.
    ///
    /// - Parameter value: the number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A boolean value from a literal.
    ///
    /// - Parameter value: the boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension EventValue: Codable {
    /// Reads a JSON scalar.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` for anything but a string, number or boolean.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Bool first: some decoders would read `true` as 1.
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected a string, integer, double or bool")
        }
    }

    /// Writes the value as a JSON scalar.
    ///
    /// - Parameter encoder: the encoder to write to.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        }
    }
}

extension EventValue {
    /// Converts a value received from a notification, strictly.
    ///
    /// Accepts `String`, `Substring`, `Bool`, the fixed-width integers (when they fit in `Int`),
    /// finite `Double`/`Float`, `NSNumber` and `EventValue`; anything else (arrays,
    /// dictionaries, `NSNull`, dates, non-finite numbers) is rejected with the reason.
    ///
    /// - Parameter value: a value read from a notification or any other untyped source.
    /// - Returns: the event value, or why it cannot be one.
    public static func converting(_ value: Any) -> Result<EventValue, ValueRejection> {
        converting(value, limit: .native)
    }

    /// ``converting(_:)`` for an `Int` of the given range: tests pass `.int32` to run the code
    /// an Apple Watch runs.
    static func converting(_ value: Any, limit: IntRange) -> Result<EventValue, ValueRejection> {
        // The usual types first, by exact type: on Linux each failed `as?` below costs a few
        // hundred instructions, and posts carry almost nothing but these four.
        let valueType = type(of: value)
        if valueType == String.self, let string = value as? String { return .success(.string(string)) }
        if valueType == Int.self, let int = value as? Int { return .success(.int(int)) }
        if valueType == Bool.self, let bool = value as? Bool { return .success(.bool(bool)) }
        if valueType == Double.self, let double = value as? Double {
            return double.isFinite ? .success(.double(double)) : .failure(.nonFinite)
        }
        switch value {
        case let string as String: return .success(.string(string))
        case let value as EventValue:
            if case .double(let double) = value, !double.isFinite { return .failure(.nonFinite) }
            return .success(value)
        default: break
        }
        // An NSNumber must be checked before Swift's bridging casts: on Apple platforms
        // `NSNumber(1) as? Bool` succeeds, which would turn integers into booleans.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return converting(number, limit: limit)
        }
        switch value {
        case let bool as Bool: return .success(.bool(bool))
        case let int as Int: return .success(.int(int))
        case let double as Double: return double.isFinite ? .success(.double(double)) : .failure(.nonFinite)
        case let float as Float: return float.isFinite ? .success(.double(Double(float))) : .failure(.nonFinite)
        case let substring as Substring: return .success(.string(String(substring)))
        case let int as Int8: return integer(int, limit: limit)
        case let int as Int16: return integer(int, limit: limit)
        case let int as Int32: return integer(int, limit: limit)
        case let int as Int64: return integer(int, limit: limit)
        case let int as UInt8: return integer(int, limit: limit)
        case let int as UInt16: return integer(int, limit: limit)
        case let int as UInt32: return integer(int, limit: limit)
        case let int as UInt64: return integer(int, limit: limit)
        case let int as UInt: return integer(int, limit: limit)
        default: return .failure(.notScalar(typeName: String(describing: type(of: value))))
        }
    }

    /// An integer of any width as `.int`, or ``ValueRejection/outOfRange`` where it does not
    /// fit (a large `Int64` or `UInt32` where `Int` is 32 bits).
    static func integer<Source: BinaryInteger>(_ value: Source, limit: IntRange) -> Result<EventValue, ValueRejection> {
        checkedInt(value, limit: limit).map { .success(.int($0)) } ?? .failure(.outOfRange)
    }

    private static func converting(_ number: NSNumber, limit: IntRange) -> Result<EventValue, ValueRejection> {
        if isBoolean(number) { return .success(.bool(number.boolValue)) }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            let double = number.doubleValue
            return double.isFinite ? .success(.double(double)) : .failure(.nonFinite)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"):
            return integer(number.uint64Value, limit: limit)
        default:
            // int64Value, not intValue: intValue truncates silently where Int is 32 bits.
            return integer(number.int64Value, limit: limit)
        }
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
            return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
            // swift-corelibs-foundation stores booleans as `char`; an explicit Int8 NSNumber
            // therefore reads as a Bool here, which no Swift poster produces.
            let code = UInt8(bitPattern: number.objCType.pointee)
            return code == UInt8(ascii: "c") || code == UInt8(ascii: "B")
        #endif
    }

    /// Why a value was not accepted as an event argument.
    public enum ValueRejection: Error, Hashable, Sendable, CustomStringConvertible {
        /// Not a string, number or boolean (an array, a dictionary, `NSNull`, a date, …).
        case notScalar(typeName: String)
        /// A NaN or infinite number.
        case nonFinite
        /// An integer too large for `Int` on this platform.
        case outOfRange

        /// Why, in words for a message.
        public var description: String {
            switch self {
            case .notScalar(let typeName):
                return "\(typeName.withIndefiniteArticle), not a string, integer, double or bool"
            case .nonFinite: return "a non-finite number (NaN or infinity)"
            case .outOfRange: return "an integer that does not fit in Int"
            }
        }
    }
}

/// An event's arguments: string keys to scalar values.
public typealias EventArgs = [String: EventValue]
