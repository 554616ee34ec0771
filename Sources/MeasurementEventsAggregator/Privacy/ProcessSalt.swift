import MeasurementEvents

extension PersonalDataProcessor {
    /// A new random salt, 32 random bytes in hexadecimal: the salt of an install's personal-data
    /// hashes (``IdentityStoreContents/personalDataSalt``), made with its anonymous id, unless
    /// ``EventAggregator/Configuration/personalDataSalt`` is set.
    static func newSalt() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for _ in 0..<32 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            hex.append(digits[Int(byte >> 4)])  // fits: 0...15
            hex.append(digits[Int(byte & 0x0f)])  // fits: 0...15
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
