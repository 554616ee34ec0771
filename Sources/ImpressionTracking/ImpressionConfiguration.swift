import Foundation

/// What counts as an impression, and how often impressions are committed and pushed.
///
/// The defaults follow the industry viewability standard: at least half of the item's area,
/// for at least one continuous second.
///
/// ```swift
/// var configuration = ImpressionConfiguration()
/// configuration.minimumVisibleFraction = 1.0      // fully visible…
/// configuration.minimumVisibleDuration = 2.0      // …for two seconds
/// configuration.commitInterval = 10
/// let engine = try ImpressionEngine<String>(configuration: configuration)
/// ```
public struct ImpressionConfiguration: Sendable {
    /// The share of the item's area (0…1) that must be visible. Default 0.5.
    public var minimumVisibleFraction: Double = 0.5
    /// How long, in seconds, the item must stay at or above ``minimumVisibleFraction`` without
    /// interruption. Default 1.0. Durations within a microsecond of it count.
    public var minimumVisibleDuration: TimeInterval = 1.0
    /// When an item may count again. Default ``ReimpressionPolicy/oncePerLifetime``.
    public var reimpressionPolicy: ReimpressionPolicy = .oncePerLifetime
    /// Seconds between two commit-and-push cycles; must be greater than
    /// ``minimumVisibleDuration``. Default 5.
    public var commitInterval: TimeInterval = 5
    /// The most impressions handed to the service in one batch. Default 50.
    public var batchSize = 50
    /// The most committed impressions kept while the service fails; beyond it the oldest are
    /// dropped and counted in ``ImpressionEngine/Diagnostics/droppedOnOverflow``. Default 10,000.
    public var storeLimit = 10_000
    /// Commit and push at once when the app enters background, where it may be killed.
    /// Default true.
    public var pushesOnBackground = true
    /// Called for each failed encode or send. The engine counts them either way.
    public var problemHandler: (@Sendable (ImpressionProblem) -> Void)?

    /// Makes the default configuration: half the area, for one second, once per lifetime.
    public init() {}

    /// Checks every setting; the engine calls it when it is made.
    ///
    /// - Throws: ``ImpressionConfigurationError``, listing every invalid setting.
    public func validate() throws {
        var problems: [ImpressionConfigurationError.Problem] = []
        if !(minimumVisibleFraction > 0 && minimumVisibleFraction <= 1) {
            problems.append(
                .init(
                    setting: "minimumVisibleFraction", found: "\(minimumVisibleFraction)",
                    expected: "a share of the item's area greater than 0 and at most 1"))
        }
        if !(minimumVisibleDuration.isFinite && minimumVisibleDuration >= 0) {
            problems.append(
                .init(
                    setting: "minimumVisibleDuration", found: "\(minimumVisibleDuration) s",
                    expected: "a finite number of seconds, 0 or more"))
        }
        if !(commitInterval.isFinite && commitInterval > minimumVisibleDuration) {
            problems.append(
                .init(
                    setting: "commitInterval", found: "\(commitInterval) s",
                    expected: "a finite interval strictly greater than minimumVisibleDuration "
                        + "(\(minimumVisibleDuration) s), so that an item can complete an impression between two cycles"
                ))
        }
        if batchSize < 1 {
            problems.append(.init(setting: "batchSize", found: "\(batchSize)", expected: "1 or more"))
        }
        if storeLimit < 1 {
            problems.append(.init(setting: "storeLimit", found: "\(storeLimit)", expected: "1 or more"))
        }
        if !problems.isEmpty { throw ImpressionConfigurationError(problems: problems) }
    }
}

/// An impression configuration that cannot work, with every reason at once.
///
/// ```
/// invalid impression configuration:
///   commitInterval: found 1.0 s, expected a finite interval strictly greater than minimumVisibleDuration (1.0 s), …
/// ```
public struct ImpressionConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One invalid setting.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// The property of ``ImpressionConfiguration`` at fault.
        public let setting: String
        /// Its value: `1.0 s`.
        public let found: String
        /// What would work.
        public let expected: String

        /// `setting: found …, expected …`.
        public var description: String { "\(setting): found \(found), expected \(expected)" }
    }

    /// Every invalid setting, in declaration order.
    public let problems: [Problem]

    /// The message, one problem a line.
    public var description: String {
        (["invalid impression configuration:"] + problems.map { "  " + $0.description }).joined(separator: "\n")
    }
}
