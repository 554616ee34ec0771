import MeasurementEvents

/// What can be recovered from an identity file that does not parse (cut short, partly
/// overwritten): its anonymous id, its consent and its personal-data salt, read from the text around their keys, so that
/// a damaged store does not give the install a new anonymous id, nor forget a denial.
enum IdentityStoreSalvage {
    /// The anonymous id (and consent, when readable) found in `bytes`; `nil` when no valid
    /// anonymous id is there.
    static func contents(in bytes: [UInt8]) -> IdentityStoreContents? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let anonymousID = stringValue(of: "anonymousID", in: text),
            (1...IdentityChange.maximumIDBytes).contains(anonymousID.utf8.count),
            !anonymousID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        let consent = stringValue(of: "consent", in: text).flatMap(Consent.init(rawValue:))
        // A salt is kept only whole (64 hexadecimal digits): a cut one would change every hash.
        let salt = stringValue(of: "personalDataSalt", in: text).flatMap { salt in
            salt.utf8.count == 64 && salt.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
                ? salt : nil
        }
        return IdentityStoreContents(
            identity: EventIdentity(anonymousID: anonymousID), consent: consent, personalDataSalt: salt)
    }

    /// The string after the first `"key"` and a colon, when it is a plain JSON string (no
    /// escapes) closed before the text ends.
    static func stringValue(of key: String, in text: String) -> String? {
        guard let keyRange = text.range(of: "\"\(key)\"") else { return nil }
        var rest = text[keyRange.upperBound...].drop(while: \.isWhitespace)
        guard rest.first == ":" else { return nil }
        rest = rest.dropFirst().drop(while: \.isWhitespace)
        guard rest.first == "\"" else { return nil }
        rest = rest.dropFirst()
        guard let end = rest.firstIndex(where: { $0 == "\"" || $0 == "\\" }), rest[end] == "\"" else { return nil }
        return String(rest[..<end])
    }
}
