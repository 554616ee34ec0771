import Foundation
import MeasurementEvents

/// Notices the mistake that otherwise fails in silence: events posted on a center where no
/// aggregator was ever started. Until its aggregator starts, it observes the center and counts
/// the events posted there; ``EventAggregator/start()`` removes the observer, so a started
/// aggregator's posting path carries nothing of it. The finding is reported once, when the app
/// waits for delivery or reads the diagnostics of the aggregator it forgot to start.
final class StartCheck: Sendable {
    private struct State {
        var observer: (any NSObjectProtocol)?
        var started = false
        var reported = false
    }

    private let center: NotificationCenter
    private let state = LockedValue(State())
    private let posted = LockedValue(0)

    init(center: NotificationCenter) {
        self.center = center
        let posted = self.posted
        let observer = center.addObserverHandingOff(forName: .measurementEvent) { _ in
            posted.withLock { $0 += 1 }
        }
        state.withLock { $0.observer = observer }
    }

    deinit {
        if let observer = state.withLock({ $0.observer }) { center.removeObserver(observer) }
    }

    /// Called by ``EventAggregator/start()``: stops counting and records the center as served.
    func aggregatorStarted() {
        let observer = state.withLock { state -> (any NSObjectProtocol)? in
            state.started = true
            defer { state.observer = nil }
            return state.observer
        }
        if let observer { center.removeObserver(observer) }
        StartedCenters.shared.insert(center)
    }

    /// The problem to report, the first time only: events were posted on the center and this
    /// aggregator was never started.
    func problem() -> EventAggregator.Problem? {
        let posts = posted.withLock { $0 }
        guard posts > 0 else { return nil }
        let first = state.withLock { state -> Bool in
            guard !state.started, !state.reported else { return false }
            state.reported = true
            return true
        }
        guard first else { return nil }
        return .notStarted(eventsPosted: posts, anotherAggregatorStarted: StartedCenters.shared.contains(center))
    }
}

/// The notification centers on which an aggregator has been started, held weakly: a center
/// made and released by a test must not make a later one at the same address look served.
final class StartedCenters: Sendable {
    static let shared = StartedCenters()

    private struct Entry {
        weak var center: NotificationCenter?
    }

    private let entries = LockedValue<[ObjectIdentifier: Entry]>([:])

    func insert(_ center: NotificationCenter) {
        entries.withLock { entries in
            entries = entries.filter { $0.value.center != nil }
            entries[ObjectIdentifier(center)] = Entry(center: center)
        }
    }

    func contains(_ center: NotificationCenter) -> Bool {
        entries.withLock { $0[ObjectIdentifier(center)]?.center === center }
    }
}
