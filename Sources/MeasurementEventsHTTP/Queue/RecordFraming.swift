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
        appendUInt32(UInt32(payload.count), to: &buffer)
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
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }

    /// What a scan of a file's bytes found.
    struct Scan {
        /// Payload ranges of the records whose checksum matched, in order.
        var records: [Range<Int>] = []
        /// Records whose frame was intact but whose checksum did not match.
        var corruptRecords = 0
        /// Where the last complete record ends: the length to truncate a torn file to.
        var validLength = 0
        /// Bytes after `validLength` that are not a complete record: a torn final write, or
        /// garbage (when ``garbage`` is set).
        var trailingBytes = 0
        /// The bytes after `validLength` did not even start like a record.
        var garbage = false
    }

    /// Reads frames from the start; stops at the first frame that is incomplete or has no magic.
    static func scan(_ bytes: [UInt8]) -> Scan {
        var scan = Scan()
        var offset = 0
        while offset < bytes.count {
            let remaining = bytes.count - offset
            if remaining >= 2, bytes[offset] != magic.0 || bytes[offset + 1] != magic.1 {
                scan.garbage = true
                break
            }
            if remaining == 1, bytes[offset] != magic.0 {
                scan.garbage = true
                break
            }
            guard remaining >= headerSize else { break }
            let length = Int(readUInt32(bytes, at: offset + 2))
            if length > maximumPayloadSize {
                scan.garbage = true
                break
            }
            guard remaining >= headerSize + length else { break }
            let payload = (offset + headerSize)..<(offset + headerSize + length)
            if CRC32.checksum(bytes[payload]) == readUInt32(bytes, at: offset + 6) {
                scan.records.append(payload)
            } else {
                scan.corruptRecords += 1
            }
            offset += headerSize + length
            scan.validLength = offset
        }
        scan.trailingBytes = bytes.count - scan.validLength
        return scan
    }
}

/// CRC-32 (IEEE 802.3, as in zip and PNG).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }

    static func checksum<Bytes: Collection>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
