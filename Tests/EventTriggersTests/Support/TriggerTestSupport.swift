import EventTriggers
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Something to attach events to, standing in for a view controller or a cell.
final class ScreenObject: Sendable {
    let name: String
    init(_ name: String = "screen") { self.name = name }
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let current: LockedValue<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_000)) { current = LockedValue(start) }
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

/// Collects values from actions running on any thread.
final class Collected<Value: Sendable>: Sendable {
    private let values = LockedValue<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// The measurement events posted on a private center, read back strictly.
final class PostedEvents: @unchecked Sendable {
    // @unchecked: `observer` is written once in init and only read in deinit.
    let center = NotificationCenter()
    private let events = Collected<MeasurementEvent>()
    private var observer: (any NSObjectProtocol)?

    init() {
        let events = events
        observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            if let event = try? MeasurementEvent(notification: note) { events.append(event) }
        }
    }

    deinit { if let observer { center.removeObserver(observer) } }

    var all: [MeasurementEvent] { events.all }
}
