import CZlib

/// How records sit in a queue file: `"ME"`, payload length (UInt32 LE), CRC-32 of the
/// payload (UInt32 LE), then the payload. The magic and checksum let recovery tell a
/// complete record from a torn or garbled one.
enum RecordFraming {
    static let magic: (UInt8, UInt8) = (0x4D, 0x45)
    static let headerSize = 10
    /// Records longer than this are refused when tracking and treated as garbage when read.
    static let maximumPayloadSize = 1 << 20

    static func appendFrame(payload: ArraySlice<UInt8>, to buffer: inout [UInt8]) {
        buffer.append(magic.0)
        buffer.append(magic.1)
        // DiskQueue refuses payloads over maximumPayloadSize (1 MiB).
        appendUInt32(UInt32(payload.count), to: &buffer)  // fits: at most 1 MiB
        appendUInt32(CRC32.checksum(payload), to: &buffer)
        buffer.append(contentsOf: payload)
    }

    static func appendUInt32(_ value: UInt32, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 24))
    }

    static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        // fits: each byte widens to UInt32.
        let (b0, b1, b2, b3) = (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
        return UInt32(truncatingIfNeeded: b0) | UInt32(truncatingIfNeeded: b1) << 8
            | UInt32(truncatingIfNeeded: b2) << 16 | UInt32(truncatingIfNeeded: b3) << 24
    }

    /// A payload length read from disk, as an `Int`, or `nil` when it is above `maximum`.
    ///
    /// The check is made on the unsigned value before any conversion, so a corrupt length
    /// never traps where `Int` is 32 bits (Apple Watch); `maximum` defaults to
    /// ``maximumPayloadSize``, which fits any `Int`.
    static func payloadLength(_ raw: UInt32, maximum: Int = maximumPayloadSize) -> Int? {
        guard maximum >= 0, UInt64(raw) <= UInt64(maximum) else { return nil }
        return Int(raw)  // checked: raw <= maximum, an Int, just above
    }

    /// What a scan of a file's bytes found.
    struct Scan {
        /// Payload ranges of the records whose checksum matched, in order.
        var records: [Range<Int>] = []
        /// Records lost to damage, as far as the frames tell: a damaged stretch between two
        /// good records counts one, plus one per further frame start found inside it.
        var corruptRecords = 0
        /// Bytes that are not part of a good record (damage anywhere, and a torn tail).
        var damagedBytes = 0
        /// Where the last good record ends: the length an open segment is cut back to.
        var validLength = 0
        /// Bytes after `validLength`.
        var trailingBytes = 0
        /// The part of `corruptRecords` in the bytes after `validLength` (0 for a torn tail).
        var trailingCorruptRecords = 0
        /// The bytes after `validLength` are one record cut short by the end of the file (a
        /// torn last write), not damage.
        var tornTail = false
    }

    /// Reads every good record. After a bad frame (bad magic, length or checksum) it looks
    /// for the next good frame, so damage never hides the records after it.
    static func scan(_ bytes: [UInt8]) -> Scan {
        var scan = Scan()
        var offset = 0
        while offset < bytes.count {
            if let payload = goodFrame(in: bytes, at: offset) {
                scan.records.append(payload)
                offset = payload.upperBound
                scan.validLength = offset
                continue
            }
            // Damage from `offset` to the next good frame, or to the end of the file.
            var next = offset + 1
            while next < bytes.count, goodFrame(in: bytes, at: next) == nil { next += 1 }
            if next < bytes.count {
                scan.corruptRecords += estimatedRecords(in: bytes, from: offset, to: next, beforeGoodFrame: true)
                scan.damagedBytes += next - offset
            } else {
                scan.tornTail = isTornTail(bytes, from: offset)
                if !scan.tornTail {
                    scan.trailingCorruptRecords = estimatedRecords(
                        in: bytes, from: offset, to: next, beforeGoodFrame: false)
                    scan.corruptRecords += scan.trailingCorruptRecords
                }
            }
            offset = next
        }
        scan.trailingBytes = bytes.count - scan.validLength
        scan.damagedBytes += scan.tornTail ? 0 : scan.trailingBytes
        return scan
    }

    /// How many whole frames follow each other from the start of `bytes`, by their headers
    /// alone (magic and length; no checksum): a count for the queue's index at start, which the
    /// scan made when the file is read corrects. Stops at the first header that is not one.
    static func countFrames(_ bytes: [UInt8]) -> Int {
        var count = 0
        var offset = 0
        while bytes.count - offset >= headerSize, bytes[offset] == magic.0, bytes[offset + 1] == magic.1,
            let length = payloadLength(readUInt32(bytes, at: offset + 2)),
            bytes.count - offset - headerSize >= length
        {
            count += 1
            offset += headerSize + length
        }
        return count
    }

    /// The payload range of a complete frame at `offset` whose checksum matches.
    private static func goodFrame(in bytes: [UInt8], at offset: Int) -> Range<Int>? {
        guard bytes.count - offset >= headerSize, bytes[offset] == magic.0, bytes[offset + 1] == magic.1,
            let length = payloadLength(readUInt32(bytes, at: offset + 2)),
            bytes.count - offset - headerSize >= length
        else { return nil }
        let payload = (offset + headerSize)..<(offset + headerSize + length)
        return CRC32.checksum(bytes[payload]) == readUInt32(bytes, at: offset + 6) ? payload : nil
    }

    /// Whether `offset...` is the start of one plausible frame that the end of the file cut.
    private static func isTornTail(_ bytes: [UInt8], from offset: Int) -> Bool {
        let remaining = bytes.count - offset
        guard bytes[offset] == magic.0, remaining == 1 || bytes[offset + 1] == magic.1 else { return false }
        guard remaining >= 6 else { return true }
        guard let length = payloadLength(readUInt32(bytes, at: offset + 2)) else { return false }
        return remaining < headerSize + length
    }

    /// How many records a damaged stretch held, as far as its frame starts tell. The stretch
    /// starts where a record should (after a good one, or at the start of the file): that is
    /// one record when a good frame follows, or when it looks like a frame start; each further
    /// frame start inside it (the magic and a possible length) counts one more.
    private static func estimatedRecords(in bytes: [UInt8], from start: Int, to end: Int, beforeGoodFrame: Bool) -> Int
    {
        var count = 0
        var offset = start
        while offset < end {
            let length = frameStartLength(bytes, at: offset, end: end)
            if length != nil || (offset == start && beforeGoodFrame) { count += 1 }
            if let length, end - offset - headerSize >= length {
                offset += headerSize + length
                continue
            }
            offset += 1
            while offset < end, frameStartLength(bytes, at: offset, end: end) == nil { offset += 1 }
        }
        return count
    }

    /// The length in a frame header at `offset` (before `end`) that has the magic and a length
    /// that is possible; `nil` when there is no such header.
    private static func frameStartLength(_ bytes: [UInt8], at offset: Int, end: Int) -> Int? {
        guard end - offset >= 6, bytes[offset] == magic.0, bytes[offset + 1] == magic.1 else { return nil }
        return payloadLength(readUInt32(bytes, at: offset + 2))
    }
}

/// CRC-32 (IEEE 802.3, as in zip and PNG): zlib's `crc32`, the same checksum, several times
/// faster than a byte-at-a-time table (6 % of a server's samples went to the table's loop, issue
/// 49); the table remains for bytes that are not contiguous and lengths past zlib's 32 bits.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(truncatingIfNeeded: index)  // 0..<256
        for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }

    static func checksum<Bytes: Collection>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        let fast = bytes.withContiguousStorageIfAvailable { buffer -> UInt32? in
            // zlib counts in uInt (32 bits): longer buffers take the table.
            guard let length = uInt(exactly: buffer.count) else { return nil }
            return UInt32(truncatingIfNeeded: crc32(0, buffer.baseAddress, length))  // a CRC-32 in a uLong
        }
        if let fast = fast ?? nil { return fast }
        return tableChecksum(bytes)
    }

    /// The same checksum, a byte at a time.
    static func tableChecksum<Bytes: Collection>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = table[Int(truncatingIfNeeded: (crc ^ UInt32(truncatingIfNeeded: byte)) & 0xFF)] ^ (crc >> 8)
            }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
