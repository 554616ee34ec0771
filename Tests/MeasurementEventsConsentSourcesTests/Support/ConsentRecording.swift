import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// What a consent source delivered and reported, in order, from any thread.
final class ConsentRecording: Sendable {
    private let updatesStore = LockedValue<[[ConsentPurpose: Consent]]>([])
    private let problemsStore = LockedValue<[String]>([])

    /// Every update delivered, oldest first.
    var updates: [[ConsentPurpose: Consent]] { updatesStore.withLock { $0 } }
    /// Every problem reported, oldest first.
    var problems: [String] { problemsStore.withLock { $0 } }

    /// The closure to give a source's `start(_:)`.
    var update: @Sendable ([ConsentPurpose: Consent]) -> Void {
        { [updatesStore] consents in updatesStore.withLock { $0.append(consents) } }
    }

    /// The closure to give a source's `problemHandler`.
    var problemHandler: @Sendable (String) -> Void {
        { [problemsStore] problem in problemsStore.withLock { $0.append(problem) } }
    }
}

/// A `UserDefaults` suite of its own for one test, as a consent platform would write to it;
/// emptied when the test ends.
final class ConsentDefaults {
    let name = "MeasurementEventsConsentSourcesTests.\(UUID().uuidString)"
    let defaults: UserDefaults

    init() {
        defaults = UserDefaults(suiteName: name)!
    }

    /// Writes each key through `set(_:forKey:)`, as a platform does one key at a time (on Linux
    /// no notification follows: swift-corelibs-foundation posts none from `set`).
    func write(_ values: [String: Any]) {
        for (key, value) in values { defaults.set(value, forKey: key) }
    }

    /// Replaces the suite's content at once: swift-corelibs-foundation, like Apple's Foundation,
    /// posts `UserDefaults.didChangeNotification` after it.
    func replaceAll(with values: [String: Any]) {
        defaults.setPersistentDomain(values, forName: name)
    }

    func remove() {
        defaults.removePersistentDomain(forName: name)
    }
}
