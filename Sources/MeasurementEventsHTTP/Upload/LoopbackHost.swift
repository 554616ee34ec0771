#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// Which hosts count as this machine, for allowing plain http. Parsed, never matched by prefix:
/// `127.0.0.1.example.com` is a name that anyone can point anywhere.
enum LoopbackHost {
    /// `localhost`, a dotted-quad IPv4 literal in 127.0.0.0/8, or the IPv6 literal `::1` (with or
    /// without brackets). `host` is lowercased.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        if let octets = ipv4Octets(host) { return octets[0] == 127 }
        var address = host
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        return isIPv6Loopback(address)
    }

    /// The four octets of a strict dotted-quad literal (`127.0.0.1`, no shorthand, no octal).
    static func ipv4Octets(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var octets: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count),
                part.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                part.utf8.count == 1 || part.utf8.first != UInt8(ascii: "0"),
                let octet = UInt8(part)
            else { return nil }
            octets.append(octet)
        }
        return octets
    }

    private static func isIPv6Loopback(_ text: String) -> Bool {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return false }
        return withUnsafeBytes(of: &address) { bytes in
            bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
        }
    }
}
