/// One allow-list or deny-list entry: an exact event name, or a wildcard.
///
/// - `"feed/item_tapped"` matches that name only.
/// - `"app/permission/*"` matches every name under `app/permission/`, at any depth.
/// - `"*"` matches every name.
///
/// A `*` anywhere else makes the pattern invalid: ``parse(_:)`` throws, and a pattern written
/// as a literal matches nothing and is listed in ``EventFilter/invalidPatterns``.
public struct EventPattern: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible, Codable {
    /// What a pattern matches.
    public enum Kind: Hashable, Sendable {
        /// Exactly this name.
        case exact(String)
        /// A prefix that ends with `/`.
        case prefix(String)
        /// Every name: the pattern `*`.
        case everything
        /// Nothing: the text was not a valid pattern.
        case invalid(String)
    }

    /// What this pattern matches.
    public let kind: Kind

    /// A pattern from a literal; an invalid one matches nothing (see ``EventFilter/invalidPatterns``).
    ///
    /// - Parameter value: an exact name, `prefix/*` or `*`.
    public init(stringLiteral value: String) {
        self.init(lenient: value)
    }

    /// A pattern that matches exactly `name`.
    ///
    /// - Parameter name: the event name.
    public init(_ name: EventName) {
        kind = .exact(name.rawValue)
    }

    private init(lenient text: String) {
        do { kind = try Self.parse(text).kind } catch { kind = .invalid(text) }
    }

    /// Reads a pattern, or says what is wrong with it.
    ///
    /// - Parameter text: an exact name, `prefix/*` or `*`.
    /// - Returns: the pattern.
    /// - Throws: ``EventPatternError`` saying what is wrong with `text`.
    public static func parse(_ text: String) throws(EventPatternError) -> EventPattern {
        if text == "*" { return EventPattern(kind: .everything) }
        guard let star = text.firstIndex(of: "*") else {
            if let problem = EventName(text).validationFailure {
                throw EventPatternError(pattern: text, problem: problem)
            }
            return EventPattern(kind: .exact(text))
        }
        let prefix = text[..<star]
        guard text.index(after: star) == text.endIndex, prefix.hasSuffix("/") else {
            throw EventPatternError(
                pattern: text, problem: "a wildcard must be \"*\" alone or a final \"/*\", as in \"feed/*\"")
        }
        if let problem = EventName(String(prefix.dropLast())).validationFailure {
            throw EventPatternError(pattern: text, problem: problem)
        }
        return EventPattern(kind: .prefix(String(prefix)))
    }

    private init(kind: Kind) { self.kind = kind }

    /// The pattern's text.
    public var description: String {
        switch kind {
        case .exact(let name): return name
        case .prefix(let prefix): return prefix + "*"
        case .everything: return "*"
        case .invalid(let text): return text
        }
    }

    /// Reads a pattern from its text.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError.dataCorrupted` for an invalid pattern.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try Self.parse(text) } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Writes the pattern as its text.
    ///
    /// - Parameter encoder: the encoder to write to.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Whether this single pattern matches `name`.
    ///
    /// - Parameter name: an event name.
    /// - Returns: whether the pattern matches it.
    public func matches(_ name: EventName) -> Bool {
        switch kind {
        case .exact(let exact): return exact == name.rawValue
        // Bytes, as the filter compares them: `hasPrefix` compares characters, and "/" followed
        // by a combining mark is one character.
        case .prefix(let prefix): return name.rawValue.utf8.starts(with: prefix.utf8)
        case .everything: return true
        case .invalid: return false
        }
    }
}

/// Why a pattern could not be read.
public struct EventPatternError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The pattern's text.
    public let pattern: String
    /// What is wrong with it.
    public let problem: String
    /// The pattern and what is wrong with it.
    public var description: String { "invalid event pattern \(quotedInFull(pattern)): \(problem)" }
}

/// Decides which events an aggregator keeps: an allow-list, and a deny-list that wins over it.
///
/// ```swift
/// let filter = EventFilter(allow: ["feed/*", "app/launched"], deny: ["feed/debug/*"])
/// ```
///
/// A lookup costs one hash lookup per slash in the name, whatever the lists' sizes.
public struct EventFilter: Sendable, Equatable {
    private var allowSet: PatternSet
    private var denySet: PatternSet

    /// The patterns that were given but could not be read; they match nothing.
    public let invalidPatterns: [String]

    /// A filter that keeps the names `allow` matches, except those `deny` matches.
    ///
    /// ```swift
    /// let filter = EventFilter(allow: ["feed/*", "app/launched"], deny: ["feed/debug/*"])
    /// ```
    ///
    /// - Parameters:
    ///   - allow: the patterns of the names to keep.
    ///   - deny: the patterns of the names to drop even when allowed.
    public init(allow: some Sequence<EventPattern>, deny: some Sequence<EventPattern> = [EventPattern]()) {
        allowSet = PatternSet(allow)
        denySet = PatternSet(deny)
        invalidPatterns = allowSet.invalid + denySet.invalid
    }

    /// Keeps every event.
    public static let allowAll = EventFilter(allow: ["*"])
    /// Keeps nothing.
    public static let denyAll = EventFilter(allow: [EventPattern]())

    /// Whether an event named `name` is kept: allowed and not denied.
    ///
    /// - Parameter name: an event name.
    /// - Returns: `true` when the event is kept.
    public func allows(_ name: EventName) -> Bool {
        allows(name.rawValue)
    }

    @inline(__always)
    package func allows(_ name: String) -> Bool {
        allowSet.matches(name) && !denySet.matches(name)
    }

    /// Why the filter drops `name`, for the event trail; `nil` when it keeps it.
    package func reasonForDropping(_ name: String) -> String? {
        if !allowSet.matches(name) { return "not on the allow-list" }
        if denySet.matches(name) { return "on the deny-list" }
        return nil
    }
}

private struct PatternSet: Sendable, Equatable {
    var everything = false
    var exact: Set<String> = []
    var prefixes: Set<Substring> = []
    /// Bit `n` is set when some prefix is `n` bytes long, so that most slashes in a name
    /// need no hash lookup.
    var prefixLengths: [UInt64] = []
    var invalid: [String] = []

    init(_ patterns: some Sequence<EventPattern>) {
        for pattern in patterns {
            switch pattern.kind {
            case .exact(let name): exact.insert(name)
            case .prefix(let prefix):
                prefixes.insert(Substring(prefix))
                let length = prefix.utf8.count
                if prefixLengths.count <= length / 64 {
                    prefixLengths += repeatElement(0, count: length / 64 + 1 - prefixLengths.count)
                }
                prefixLengths[length / 64] |= 1 << UInt64(length % 64)
            case .everything: everything = true
            case .invalid(let text): invalid.append(text)
            }
        }
    }

    @inline(__always)
    func matches(_ name: String) -> Bool {
        if everything { return true }
        if !exact.isEmpty && exact.contains(name) { return true }
        if prefixes.isEmpty { return false }
        return name.utf8.withContiguousStorageIfAvailable { matchesPrefix(of: name, utf8: $0) }
            ?? matchesPrefix(of: name, utf8: Array(name.utf8))
    }

    /// Every prefix ends at a slash, so only the name's slash positions need a lookup.
    private func matchesPrefix(of name: String, utf8: some Collection<UInt8>) -> Bool {
        var length = 0
        for byte in utf8 {
            length += 1
            guard byte == UInt8(ascii: "/"), hasPrefix(ofLength: length) else { continue }
            let end = name.utf8.index(name.utf8.startIndex, offsetBy: length)
            if prefixes.contains(name[..<end]) { return true }
        }
        return false
    }

    private func hasPrefix(ofLength length: Int) -> Bool {
        let word = length / 64
        return word < prefixLengths.count && prefixLengths[word] & (1 << UInt64(length % 64)) != 0
    }
}
