import CZlib

/// Request bodies in gzip (RFC 1952), with the system zlib: part of every Apple SDK, and of
/// Debian's `zlib1g-dev` on Linux. No package dependency, and the same code on every platform
/// (Apple's Compression framework writes raw deflate only, and would need a gzip wrapper of our
/// own and a second code path).
package enum GzipBody {
    /// `bytes` compressed in one call at zlib's `level` (1 fastest to 9 smallest; zlib's default,
    /// 6, when out of that range), or `nil` when zlib fails (the body is then sent as it is).
    static func compress(_ bytes: [UInt8], level: Int = 6) -> [UInt8]? {
        var stream = z_stream()
        let zlibLevel = (1...9).contains(level) ? Int32(level) : Z_DEFAULT_COMPRESSION  // fits: 1 to 9
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        let initialised = deflateInit2_(
            &stream, zlibLevel, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))  // fits: a struct of about 112 bytes
        guard initialised == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        // deflateBound is enough room for one Z_FINISH call. zlib counts in 32 bits (uInt) and in
        // uLong (32 bits on Apple Watch): every conversion is checked.
        guard let sourceLength = uLong(exactly: bytes.count), let available = uInt(exactly: bytes.count),
            let bound = Int(exactly: deflateBound(&stream, sourceLength)), let room = uInt(exactly: bound)
        else { return nil }
        var output = [UInt8](repeating: 0, count: bound)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = available
                stream.next_out = out.baseAddress
                stream.avail_out = room
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, let written = Int(exactly: stream.total_out), written <= output.count
        else { return nil }
        output.removeSubrange(written...)
        return output
    }

    /// `bytes` inflated from gzip, or `nil` when they are not one whole gzip stream or grow past
    /// `limit`: for the servers of this package that read gzip bodies (the inspector, the
    /// loopback collector of the tests).
    package static func decompress(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        var stream = z_stream()
        let streamSize = Int32(MemoryLayout<z_stream>.size)  // fits: a struct size
        guard inflateInit2_(&stream, 15 + 16, zlibVersion(), streamSize) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var input = bytes
        return input.withUnsafeMutableBufferPointer { source -> [UInt8]? in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let unused = Int(stream.avail_out)  // fits: avail_out <= chunk.count
                output.append(contentsOf: chunk[..<(chunk.count - unused)])
                if status == Z_STREAM_END { return stream.avail_in == 0 ? output : nil }
                guard status == Z_OK, output.count <= limit else { return nil }
            }
        }
    }
}
