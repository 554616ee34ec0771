/// What kind of interaction an event records. The raw value is the wire code.
public enum EventType: String, CaseIterable, Hashable, Sendable, Codable, CustomStringConvertible {
    case activity = "ac"
    case click = "cl"
    case impression = "im"
    case redirect = "rd"
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
    public init?(codeOrName: String) {
        if let type = EventType(rawValue: codeOrName) {
            self = type
        } else if let type = EventType.allCases.first(where: { $0.name == codeOrName }) {
            self = type
        } else {
            return nil
        }
    }

    public var description: String { name }
}
