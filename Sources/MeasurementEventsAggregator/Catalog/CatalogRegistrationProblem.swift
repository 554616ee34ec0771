import MeasurementEvents

/// Something odd about the catalogs given to an aggregator; what was done about it is part of
/// the message. Reported to the problem handler when the aggregator is made.
public enum CatalogRegistrationProblem: Sendable, Hashable, CustomStringConvertible {
    /// The same catalog was registered twice; the second registration is ignored.
    case registeredTwice(module: String)
    /// Two different catalogs name the same module; both are used.
    case moduleRegisteredTwice(module: String)
    /// Catalogs that declare the same event disagree about whether an arg is personal data;
    /// it is treated as personal (hashed).
    case conflictingPersonalDataMarks(event: EventName, arg: String, markedIn: [String], unmarkedIn: [String])
    /// A personal-data arg is not text; it is hashed anyway, so trackers receive it as a
    /// `"sha256:…"` string instead of its declared type.
    case personalDataNotText(module: String, event: EventName, arg: String, type: ArgSpec.ValueType)

    /// The problem and what was done about it, in a sentence for a log.
    public var description: String {
        switch self {
        case .registeredTwice(let module):
            return "catalog \(module) is registered twice; the second registration is ignored"
        case .moduleRegisteredTwice(let module):
            return
                "two different catalogs of module \(module) are registered; the events of both are used (register one catalog per module)"
        case .conflictingPersonalDataMarks(let event, let arg, let markedIn, let unmarkedIn):
            return
                "\(event): arg \"\(arg)\" is marked \"pii\" in \(markedIn.joined(separator: ", ")) but not in \(unmarkedIn.joined(separator: ", ")); it is treated as personal data and hashed for every tracker"
        case .personalDataNotText(let module, let event, let arg, let type):
            return
                "\(module): \(event): arg \"\(arg)\" is personal data of type \(type.rawValue); it is hashed all the same and reaches trackers as a \"sha256:…\" string (declare it \"type\": \"string\")"
        }
    }
}
