/// What kind of interaction an event records. The raw value is the wire code.
public enum EventType: String, CaseIterable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Something happened without the user doing it directly (a screen appeared, a load finished); code `ac`.
    case activity = "ac"
    /// The user tapped or clicked something; code `cl`.
    case click = "cl"
    /// Something was seen; code `im`.
    case impression = "im"
    /// The user was sent elsewhere (a link, a deep link); code `rd`.
    case redirect = "rd"
    /// Any other user action, and the default type; code `ua`.
    case userAction = "ua"

    /// The type used when a poster gives none.
    public static let `default`: EventType = .userAction

    /// The readable name used in catalogs and plans: `activity`, `click`, `impression`,
    /// `redirect`, `user_action`.
    public var name: String {
        switch self {
        case .activity: return "activity"
        case .click: return "click"
        case .impression: return "impression"
        case .redirect: return "redirect"
        case .userAction: return "user_action"
        }
    }

    /// Reads either a wire code (`ua`) or a readable name (`user_action`).
    ///
    /// - Parameter codeOrName: `ua`, `userAction` or `user_action`, for example.
    public init?(codeOrName: String) {
        if let type = EventType(rawValue: codeOrName) {
            self = type
        } else if let type = EventType.allCases.first(where: { $0.name == codeOrName }) {
            self = type
        } else {
            return nil
        }
    }

    /// The readable name of the type.
    public var description: String { name }
}
