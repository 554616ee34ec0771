import Foundation

/// How long to wait before retrying a failed upload: exponential backoff with jitter,
/// capped, and the server's `Retry-After` when it sends one.
///
/// With the defaults the waits are about 1, 2, 4, 8 … seconds, each shortened by up to 20 %
/// at random (so that many devices do not retry in step), never more than 5 minutes.
public struct RetryPolicy: Sendable {
    /// The wait before the first retry, in seconds.
    public var initialDelay: TimeInterval
    /// The factor between one wait and the next.
    public var multiplier: Double
    /// The longest wait, in seconds.
    public var maximumDelay: TimeInterval
    /// The share of each delay that is random: 0.2 waits between 80 % and 100 % of it.
    public var jitter: Double
    /// The longest `Retry-After` obeyed; longer requests are shortened to it.
    public var maximumRetryAfter: TimeInterval
    /// After a reply that refuses the tracker's configuration (a 401, a revoked key; see
    /// ``BatchEncoder/refusesConfiguration(_:)``), how long to wait before asking the server
    /// once more with the same configuration, in seconds; one hour by default. A new encoder
    /// (`HTTPTracker.updateEncoder(_:)`) resumes at once.
    public var configurationRetryDelay: TimeInterval
    /// A number in [0, 1) per call; replace it to make jitter predictable in tests.
    public var random: @Sendable () -> Double

    /// A policy; the defaults wait about 1, 2, 4 … seconds, at most 5 minutes.
    ///
    /// - Parameters:
    ///   - initialDelay: the wait before the first retry, in seconds.
    ///   - multiplier: the factor between one wait and the next.
    ///   - maximumDelay: the longest wait, in seconds.
    ///   - jitter: the share of each wait that is random, clamped to 0…1.
    ///   - maximumRetryAfter: the longest `Retry-After` obeyed, in seconds.
    ///   - configurationRetryDelay: the wait, in seconds, before the same configuration is
    ///     tried again after the server refused it.
    ///   - random: a number in [0, 1) per call.
    public init(
        initialDelay: TimeInterval = 1,
        multiplier: Double = 2,
        maximumDelay: TimeInterval = 300,
        jitter: Double = 0.2,
        maximumRetryAfter: TimeInterval = 3_600,
        configurationRetryDelay: TimeInterval = 3_600,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = min(max(jitter, 0), 1)
        self.maximumRetryAfter = maximumRetryAfter
        self.configurationRetryDelay = max(configurationRetryDelay, 0)
        self.random = random
    }

    /// The wait before retry number `attempt` (1 for the first retry).
    ///
    /// - Parameters:
    ///   - attempt: the retry's number, 1 for the first.
    ///   - retryAfter: the server's `Retry-After`, which wins when given.
    /// - Returns: the wait in seconds.
    public func delay(forAttempt attempt: Int, retryAfter: TimeInterval? = nil) -> TimeInterval {
        if let retryAfter { return min(max(retryAfter, 0), maximumRetryAfter) }
        let exponent = Double(max(attempt, 1) - 1)
        let base = min(maximumDelay, initialDelay * pow(multiplier, exponent))
        return base * (1 - jitter * random())
    }

    /// Reads a `Retry-After` header: seconds, or an HTTP date relative to `now`.
    ///
    /// - Parameters:
    ///   - header: the header's value, if any.
    ///   - now: the current date, for an HTTP date.
    /// - Returns: the wait in seconds, or `nil` when there is no readable header.
    public static func retryAfter(_ header: String?, now: Date) -> TimeInterval? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = TimeInterval(header), seconds.isFinite { return max(seconds, 0) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: header) else { return nil }
        return max(date.timeIntervalSince(now), 0)
    }
}
