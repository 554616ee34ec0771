/// When an item that already made an impression may make another one.
///
/// With no option (``oncePerLifetime``) an item counts once for the engine's lifetime. Each
/// option adds a moment after which it may count again:
///
/// ```swift
/// configuration.reimpressionPolicy = .oncePerAppearance
/// configuration.reimpressionPolicy = [.afterReturnFromBackground, .afterContentReload]
/// ```
///
/// Whatever the policy, an item that stays on screen is counted once: neither a dip below the
/// area threshold nor a commit makes it count again.
public struct ReimpressionPolicy: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The options as bits.
    public let rawValue: Int

    /// Makes a policy from its bits; prefer the named options.
    ///
    /// - Parameter rawValue: the options as bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Counts again once the item has disappeared and appears again.
    public static let afterDisappearance = ReimpressionPolicy(rawValue: 1 << 0)
    /// Counts again, for every item, after the app becomes active following a stay in background.
    public static let afterReturnFromBackground = ReimpressionPolicy(rawValue: 1 << 1)
    /// Counts again, for every item, after ``ImpressionEngine/contentReloaded(at:)``; the items
    /// on screen start a new visit at the moment of the reload.
    public static let afterContentReload = ReimpressionPolicy(rawValue: 1 << 2)

    /// Each item counts once for the engine's lifetime (the default).
    public static let oncePerLifetime: ReimpressionPolicy = []
    /// Each item counts once per appearance (appeared … disappeared).
    public static let oncePerAppearance: ReimpressionPolicy = .afterDisappearance

    /// The policy as its option names: `[afterDisappearance, afterContentReload]`.
    public var description: String {
        if isEmpty { return "oncePerLifetime" }
        var parts: [String] = []
        if contains(.afterDisappearance) { parts.append("afterDisappearance") }
        if contains(.afterReturnFromBackground) { parts.append("afterReturnFromBackground") }
        if contains(.afterContentReload) { parts.append("afterContentReload") }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
