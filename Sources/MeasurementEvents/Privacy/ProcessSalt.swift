extension PersonalDataProcessor {
    /// A random salt made once per process: the default of
    /// ``EventAggregator/Configuration/personalDataSalt``. 32 random bytes, in hexadecimal.
    static let processSalt: String = {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }.joined()
    }()
}
