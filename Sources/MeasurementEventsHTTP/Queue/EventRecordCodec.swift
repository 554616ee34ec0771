import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// A compact binary form of ``QueuedEvent``: several times faster than JSON, which matters
/// because every event is encoded on the tracking path.
///
/// Version 2 (integers little-endian; strings are a varint length and UTF-8 bytes; an args
/// block is a varint count, then per arg: key, tag (s/i/d/b), value):
/// version (2), kind (1), id (16), timestamp (seconds since 2001 as Double bits) (8), type (1),
/// flags (1: category, label, user id, group id, session id, context), name, [category],
/// [label], args, anonymous id, [user id], traits, [group id, group traits], [session id (8)],
/// [context: presence bits (1: app name, version, build, bundle id, device model,
/// manufacturer, locale, time zone), os name, os version, the present strings in that order,
/// library name, library version, extra args].
///
/// Version 3: version 2 with two more flags (purposes' consents 64, foreground time 128) and,
/// after the context, [foreground milliseconds since the previous event (varint)], [the
/// purposes' consents (`EventAttribution.purposeConsents`): a varint count, then per purpose its
/// name and a byte (1 granted, 0 not)]. Written only for records that carry one of them, so that
/// a queue of an app that uses neither stays readable by earlier versions of the package.
///
/// Version 1 (still read): version, id, timestamp, type, flags (category, label, user id),
/// name, [category], [label], [user id], args. Its anonymous id is the directory's legacy
/// file (``QueuedEvent/isLegacy``).
///
/// Nothing read is trusted for arithmetic: every length and count is checked against the
/// bytes left before use, and 64-bit integers become `Int` only when they fit (`Int` is 32
/// bits on Apple Watch).
enum EventRecordCodec {
    static let version: UInt8 = 3

    struct DecodingFailure: Error, CustomStringConvertible {
        let reason: String
        var description: String { "unreadable queue record: \(reason)" }
    }

    private enum Flag {
        static let category: UInt8 = 1
        static let label: UInt8 = 2
        static let userID: UInt8 = 4
        static let groupID: UInt8 = 8
        static let sessionID: UInt8 = 16
        static let context: UInt8 = 32
        static let purposeConsents: UInt8 = 64
        static let foregroundTime: UInt8 = 128
    }

    /// The last context written or read and its bytes: a queue's records almost all carry the
    /// same context (a server's, or an app's between launches), which is then copied rather than
    /// encoded, and read once per file rather than once per record (issue 49: 4 % of a server's
    /// samples encoded contexts, and each one read allocated a dozen strings). When reading, also
    /// the latest records' attributions (`readAttribution`).
    /// A class, not a struct: its owner's state (`DiskQueue.State`) keeps one reference
    /// rather than copying and destroying its fields (issue 49's size budget).
    final class ContextCache {
        fileprivate var context: EventContext?
        fileprivate var bytes: [UInt8] = []
        /// The attributions (all but purposes) of the latest records read, each with its layout
        /// (the flags that shape it) and its bytes (`readAttribution`).
        fileprivate var attributions: [(layout: UInt8, bytes: [UInt8], storage: AttributionStorage)] = []
        /// When writing, the latest attributions written and their bytes (`attributionRecord`).
        fileprivate var written: [(storage: AttributionStorage, layout: UInt8, bytes: [UInt8])] = []
        /// Where the next attribution read, and the next written, is remembered once there are
        /// ``recentAttributions``: in place of the oldest.
        private var nextRead = 0
        private var nextWritten = 0
        /// How many attributions are remembered: a server's records come in runs of one request
        /// between those of the few other requests posted at the same time.
        static let recentAttributions = 16

        /// Remembers `entry` in `entries`, in place of the oldest once there are
        /// ``recentAttributions`` (replaced in place rather than shifted: less code, issue 34's budget).
        private static func remember<Entry>(_ entry: Entry, in entries: inout [Entry], next: inout Int) {
            if entries.count < recentAttributions {
                entries.append(entry)
            } else {
                entries[next] = entry
                next = (next + 1) % recentAttributions
            }
        }

        fileprivate func rememberRead(_ entry: (layout: UInt8, bytes: [UInt8], storage: AttributionStorage)) {
            Self.remember(entry, in: &attributions, next: &nextRead)
        }

        fileprivate func rememberWritten(_ entry: (storage: AttributionStorage, layout: UInt8, bytes: [UInt8])) {
            Self.remember(entry, in: &written, next: &nextWritten)
        }
    }

    static func encode(_ queued: QueuedEvent, into buffer: inout [UInt8]) {
        encode(queued, into: &buffer, contextCache: ContextCache())
    }

    /// Encodes `queued`; its context is copied from `contextCache` when it is the cached one,
    /// and cached otherwise.
    static func encode(_ queued: QueuedEvent, into buffer: inout [UInt8], contextCache: ContextCache) {
        let event = queued.event
        // Read field by field from the event's attribution, never copied whole: a copy of its
        // identity or context retains and releases every string in it, and this runs for every
        // event tracked (issue 49: 3 % of a server's samples copied and destroyed contexts).
        // Without an attribution, the identity is `QueuedEvent.identity`'s: an empty anonymous id.
        let attribution = event.attributionStorage
        let purposeConsents = attribution?.value.purposeConsents
        // Version 2 when nothing of version 3 is in the record: an app that sets no purpose and
        // measures no foreground time keeps queues an earlier package reads.
        let needsVersion3 = purposeConsents != nil || queued.foregroundMillisecondsSincePrevious != nil
        buffer.append(needsVersion3 ? version : 2)
        buffer.append(queued.kind.rawValue)
        withUnsafeBytes(of: event.id.uuid) { buffer.append(contentsOf: $0) }
        appendUInt64(event.timestamp.timeIntervalSinceReferenceDate.bitPattern, to: &buffer)
        buffer.append(typeCode(event.type))
        let written = attribution.map { attributionRecord(of: $0, cache: contextCache) }
        var flags: UInt8 = written?.layout ?? 0
        if event.category != nil { flags |= Flag.category }
        if event.label != nil { flags |= Flag.label }
        if purposeConsents != nil { flags |= Flag.purposeConsents }
        if queued.foregroundMillisecondsSincePrevious != nil { flags |= Flag.foregroundTime }
        buffer.append(flags)
        appendString(event.name.rawValue, to: &buffer)
        if let category = event.category { appendString(category, to: &buffer) }
        if let label = event.label { appendString(label, to: &buffer) }
        appendArgs(event.args, to: &buffer)
        if let written {
            buffer.append(contentsOf: written.bytes)
        } else {
            appendString("", to: &buffer)  // the anonymous id
            appendArgs([:], to: &buffer)  // the traits
        }
        if let milliseconds = queued.foregroundMillisecondsSincePrevious {
            appendVarint(UInt64(max(0, milliseconds)), to: &buffer)
        }
        if let purposeConsents {
            appendVarint(UInt64(purposeConsents.count), to: &buffer)
            for name in purposeConsents.keys.sorted() {
                appendString(name, to: &buffer)
                buffer.append(purposeConsents[name]! ? 1 : 0)
            }
        }
    }

    static func decode(_ bytes: ArraySlice<UInt8>) throws -> QueuedEvent {
        try decode(bytes, contextCache: ContextCache())
    }

    /// Decodes a record; a context whose bytes are the cached one's is the cached context
    /// (reading is deterministic: the same bytes read the same context), others are cached.
    static func decode(_ bytes: ArraySlice<UInt8>, contextCache: ContextCache) throws -> QueuedEvent {
        var reader = Reader(bytes: bytes)
        let recordVersion = try reader.byte()
        switch recordVersion {
        case 1: return try decodeVersion1(&reader)
        case 2, 3: break
        default: throw DecodingFailure(reason: "version \(recordVersion), expected 1 to \(version)")
        }
        let kindCode = try reader.byte()
        guard let kind = QueuedEvent.Kind(rawValue: kindCode) else {
            throw DecodingFailure(reason: "record kind \(kindCode), expected 0 to 2")
        }
        var (event, flags) = try readEventHead(&reader)
        event.args = try reader.args()
        let attribution = try readAttribution(&reader, flags: flags, cache: contextCache)
        guard flags & (Flag.purposeConsents | Flag.foregroundTime) == 0 || recordVersion >= 3 else {
            throw DecodingFailure(reason: "version 3 fields flagged in a version \(recordVersion) record")
        }
        var foregroundTime: Int64?
        if flags & Flag.foregroundTime != 0 {
            let milliseconds = try reader.varint()
            guard let value = Int64(exactly: milliseconds) else {
                throw DecodingFailure(reason: "foreground time \(milliseconds) ms")
            }
            foregroundTime = value
        }
        if flags & Flag.purposeConsents != 0 {
            var withPurposes = attribution.value
            withPurposes.purposeConsents = try readPurposeConsents(&reader)
            event.attribution = withPurposes
        } else {
            event.attributionStorage = attribution
        }
        guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes") }
        var queued = QueuedEvent(event: event, kind: kind)
        queued.foregroundMillisecondsSincePrevious = foregroundTime
        return queued
    }

    private static func readPurposeConsents(_ reader: inout Reader) throws -> [String: Bool] {
        let count = try reader.varint()
        // Each purpose takes at least 2 bytes (an empty name, its byte).
        guard count <= UInt64(reader.remaining / 2) else { throw DecodingFailure(reason: "purpose count \(count)") }
        var consents: [String: Bool] = [:]
        for _ in 0..<count {
            let name = try reader.string()
            let granted = try reader.byte()
            guard granted <= 1 else { throw DecodingFailure(reason: "purpose \(name)'s consent byte \(granted)") }
            consents[name] = granted == 1
        }
        return consents
    }

    private static func decodeVersion1(_ reader: inout Reader) throws -> QueuedEvent {
        var (event, flags) = try readEventHead(&reader)
        let userID = flags & Flag.userID != 0 ? try reader.string() : nil
        event.args = try reader.args()
        guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes") }
        event.attribution = EventAttribution(identity: EventIdentity(userID: userID, anonymousID: ""))
        var queued = QueuedEvent(event: event)
        queued.isLegacy = true
        return queued
    }

    /// Id, timestamp, type, flags, name, category and label: the same in both versions.
    private static func readEventHead(_ reader: inout Reader) throws -> (MeasurementEvent, UInt8) {
        // Copied straight into the UUID's 16 bytes, without an array per record.
        let idBytes = try reader.bytes(16)
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: idBytes) }
        let id = UUID(uuid: uuid)
        let timestamp = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.uint64()))
        let code = try reader.byte()
        guard let type = types.indices.contains(Int(code)) ? types[Int(code)] : nil else {  // fits: a UInt8
            throw DecodingFailure(reason: "event type code \(code)")
        }
        let flags = try reader.byte()
        let name = try reader.string()
        let category = flags & Flag.category != 0 ? try reader.string() : nil
        let label = flags & Flag.label != 0 ? try reader.string() : nil
        let event = MeasurementEvent(
            EventName(name), type: type, category: category, label: label, id: id, timestamp: timestamp)
        return (event, flags)
    }

    // MARK: Attribution

    /// The identity, session and context of `attribution` as a record holds them (what
    /// `readAttribution` reads), and the flags that say which are there: those made for it before
    /// when it is one of the latest attributions written (a server's events of one request share
    /// one, and come in runs between those of a few other requests; issue 49), else made field by
    /// field (never copying the identity or context whole, which retains and releases every
    /// string in it) and remembered.
    private static func attributionRecord(
        of attribution: AttributionStorage, cache: ContextCache
    ) -> (layout: UInt8, bytes: [UInt8]) {
        if let known = cache.written.first(where: { $0.storage === attribution }) { return (known.layout, known.bytes) }
        var layout: UInt8 = 0
        var bytes: [UInt8] = []
        appendString(attribution.value.identity.anonymousID, to: &bytes)
        if let userID = attribution.value.identity.userID {
            layout |= Flag.userID
            appendString(userID, to: &bytes)
        }
        appendArgs(attribution.value.identity.traits, to: &bytes)
        if let groupID = attribution.value.identity.groupID {
            layout |= Flag.groupID
            appendString(groupID, to: &bytes)
            appendArgs(attribution.value.identity.groupTraits, to: &bytes)
        }
        if let sessionID = attribution.value.sessionID {
            layout |= Flag.sessionID
            appendUInt64(UInt64(bitPattern: sessionID), to: &bytes)
        }
        // Through `map`, which lends it: `!= nil` copied the context.
        if attribution.value.context.map({ _ in true }) ?? false {
            layout |= Flag.context
            appendContext(of: attribution, to: &bytes, cache: cache)
        }
        cache.rememberWritten((attribution, layout, bytes))
        return (layout, bytes)
    }

    /// Reads a record's identity, session and context (everything of its attribution but the
    /// purposes' consents, which come after the foreground time): the attribution of a recent
    /// record when the bytes are that record's (reading is deterministic: the same bytes, read
    /// from the same start, read the same values and end at the same place), else read and
    /// remembered. A server's queue holds runs of each request's events between those of a few
    /// other requests: their records then share one attribution, read once, rather than a
    /// dozen strings each (issue 49), and an encoder grouping them by context compares them by
    /// reference.
    private static func readAttribution(
        _ reader: inout Reader, flags: UInt8, cache: ContextCache
    ) throws -> AttributionStorage {
        let layout = flags & (Flag.userID | Flag.groupID | Flag.sessionID | Flag.context)
        if let known = cache.attributions.first(where: { $0.layout == layout && reader.startsWith($0.bytes) }) {
            reader.position += known.bytes.count
            return known.storage
        }
        let start = reader.position
        var identity = EventIdentity(anonymousID: try reader.string())
        if flags & Flag.userID != 0 { identity.userID = try reader.string() }
        identity.traits = try reader.args()
        if flags & Flag.groupID != 0 {
            identity.groupID = try reader.string()
            identity.groupTraits = try reader.args()
        }
        let sessionID = flags & Flag.sessionID != 0 ? Int64(bitPattern: try reader.uint64()) : nil
        let context = flags & Flag.context != 0 ? try readContext(&reader, cache: cache) : nil
        let storage = AttributionStorage(EventAttribution(identity: identity, sessionID: sessionID, context: context))
        cache.rememberRead((layout, Array(reader.bytes[start..<reader.position]), storage))
        return storage
    }

    // MARK: Context

    /// Appends the context of `attribution` (which has one): the cached bytes when it is the
    /// cached context, else encoded and cached.
    private static func appendContext(
        of attribution: AttributionStorage, to buffer: inout [UInt8], cache: ContextCache
    ) {
        // Compared through `map`, which lends the values: `Optional`'s `==` copies both
        // contexts (every string retained and released) to compare them. Reached only for an
        // attribution not among the latest written (`attributionRecord`), so no shortcut by
        // reference here.
        if cache.context.map({ cached in attribution.value.context.map { $0 == cached } ?? false }) ?? false {
            buffer.append(contentsOf: cache.bytes)
            return
        }
        guard let context = attribution.value.context else { return }
        let start = buffer.count
        appendContext(context, to: &buffer)
        cache.context = context
        cache.bytes = Array(buffer[start...])
    }

    private static func appendContext(_ context: EventContext, to buffer: inout [UInt8]) {
        let optional = contextStrings(context)
        var presence: UInt8 = 0
        for (bit, value) in optional.enumerated() where value != nil { presence |= 1 << UInt8(bit) }
        buffer.append(presence)
        appendString(context.os.name, to: &buffer)
        appendString(context.os.version, to: &buffer)
        for value in optional { if let value { appendString(value, to: &buffer) } }
        appendString(context.library.name, to: &buffer)
        appendString(context.library.version, to: &buffer)
        appendArgs(context.extra, to: &buffer)
    }

    /// The context's optional strings, in the order of their presence bits.
    private static func contextStrings(_ context: EventContext) -> [String?] {
        [
            context.app.name, context.app.version, context.app.build, context.app.bundleID, context.device.model,
            context.device.manufacturer, context.locale, context.timeZone,
        ]
    }

    private static func readContext(_ reader: inout Reader, cache: ContextCache) throws -> EventContext {
        let known = cache.bytes
        if let context = cache.context, reader.startsWith(known) {
            reader.position += known.count
            return context
        }
        let start = reader.position
        let context = try readContext(&reader)
        cache.context = context
        cache.bytes = Array(reader.bytes[start..<reader.position])
        return context
    }

    private static func readContext(_ reader: inout Reader) throws -> EventContext {
        let presence = try reader.byte()
        let os = EventContext.OS(name: try reader.string(), version: try reader.string())
        var values: [String?] = []
        for bit in 0..<8 { values.append(presence & (1 << UInt8(bit)) != 0 ? try reader.string() : nil) }
        let library = EventContext.Library(name: try reader.string(), version: try reader.string())
        return EventContext(
            app: EventContext.App(name: values[0], version: values[1], build: values[2], bundleID: values[3]),
            os: os, device: EventContext.Device(model: values[4], manufacturer: values[5]), locale: values[6],
            timeZone: values[7], library: library, extra: try reader.args())
    }

    // MARK: Writing

    private static let types = EventType.allCases

    private static func typeCode(_ type: EventType) -> UInt8 {
        UInt8(types.firstIndex(of: type)!)
    }

    private static func appendArgs(_ args: EventArgs, to buffer: inout [UInt8]) {
        appendVarint(UInt64(args.count), to: &buffer)
        for (key, value) in args {
            appendString(key, to: &buffer)
            switch value {
            case .string(let string):
                buffer.append(UInt8(ascii: "s"))
                appendString(string, to: &buffer)
            case .int(let int):
                buffer.append(UInt8(ascii: "i"))
                appendUInt64(UInt64(bitPattern: Int64(int)), to: &buffer)
            case .double(let double):
                buffer.append(UInt8(ascii: "d"))
                appendUInt64(double.bitPattern, to: &buffer)
            case .bool(let bool):
                buffer.append(UInt8(ascii: "b"))
                buffer.append(bool ? 1 : 0)
            }
        }
    }

    private static func appendUInt64(_ value: UInt64, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    private static func appendVarint(_ value: UInt64, to buffer: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.append(UInt8(value))
    }

    private static func appendString(_ string: String, to buffer: inout [UInt8]) {
        var string = string
        string.withUTF8 { utf8 in
            appendVarint(UInt64(utf8.count), to: &buffer)
            buffer.append(contentsOf: utf8)
        }
    }

    // MARK: Reading

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var position: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var isAtEnd: Bool { position == bytes.endIndex }
        var remaining: Int { bytes.endIndex - position }

        /// Whether the bytes from the position on begin with `known`.
        func startsWith(_ known: [UInt8]) -> Bool {
            guard remaining >= known.count else { return false }
            guard !known.isEmpty else { return true }
            return bytes.withUnsafeBytes { record in
                known.withUnsafeBytes { known in
                    memcmp(record.baseAddress! + (position - bytes.startIndex), known.baseAddress!, known.count) == 0
                }
            }
        }

        mutating func byte() throws -> UInt8 {
            guard position < bytes.endIndex else { throw DecodingFailure(reason: "ends early") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, remaining >= count else { throw DecodingFailure(reason: "ends early") }
            defer { position += count }
            return bytes[position..<position + count]
        }

        mutating func uint64() throws -> UInt64 {
            var value: UInt64 = 0
            for (shift, byte) in try bytes(8).enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
            return value
        }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                guard shift < 64 else { throw DecodingFailure(reason: "varint too long") }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }

        mutating func string() throws -> String {
            let length = try varint()
            // Compared as UInt64 first: a length from disk may not fit in an Int.
            guard length <= UInt64(remaining) else { throw DecodingFailure(reason: "string length \(length)") }
            // The record's checksum already matched, so the bytes are what was written.
            return String(decoding: try bytes(Int(length)), as: UTF8.self)  // fits: checked above
        }

        mutating func args() throws -> EventArgs {
            let count = try varint()
            // Each arg takes at least 3 bytes (empty key, tag, one-byte value).
            guard count <= UInt64(remaining / 3) else { throw DecodingFailure(reason: "arg count \(count)") }
            guard count > 0 else { return [:] }  // most traits: no storage to make
            var args = EventArgs(minimumCapacity: Int(count))  // fits: at most remaining / 3, checked above
            for _ in 0..<count {
                let key = try string()
                let tag = try byte()
                switch tag {
                case UInt8(ascii: "s"): args[key] = .string(try string())
                case UInt8(ascii: "i"):
                    let value = Int64(bitPattern: try uint64())
                    guard let int = Int(exactly: value) else {
                        throw DecodingFailure(reason: "integer \(value) for \(key) does not fit this platform's Int")
                    }
                    args[key] = .int(int)
                case UInt8(ascii: "d"): args[key] = .double(Double(bitPattern: try uint64()))
                case UInt8(ascii: "b"): args[key] = .bool(try byte() != 0)
                default: throw DecodingFailure(reason: "arg value tag \(tag) for \(key)")
                }
            }
            return args
        }
    }
}
