import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Keeps events and identity changes in the order a tracker receives them.
final class OrderedTracker: EventTracker, @unchecked Sendable {
    // @unchecked: all state is behind its lock.
    enum Item: Equatable {
        case event(MeasurementEvent)
        case identity(IdentityEvent)
    }

    private let state = LockedValue<[Item]>([])
    private let consents = LockedValue<[Consent]>([])

    func track(_ event: MeasurementEvent) throws { state.withLock { $0.append(.event(event)) } }
    func identify(_ event: IdentityEvent) throws { state.withLock { $0.append(.identity(event)) } }
    func consentDidChange(to consent: Consent) throws { consents.withLock { $0.append(consent) } }

    var items: [Item] { state.withLock { $0 } }
    var events: [MeasurementEvent] {
        items.compactMap { if case .event(let event) = $0 { return event } else { return nil } }
    }
    var identityEvents: [IdentityEvent] {
        items.compactMap { if case .identity(let event) = $0 { return event } else { return nil } }
    }
    var announcedConsents: [Consent] { consents.withLock { $0 } }
}

func makeTemporaryDirectory(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("MeasurementEventsTests-\(name)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
