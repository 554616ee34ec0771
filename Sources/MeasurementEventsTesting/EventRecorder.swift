import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Records every measurement event posted on a notification center, for tests.
///
/// ```swift
/// let recorder = EventRecorder(center: center)
/// FeedScreen(center: center).didTapItem(id: "42", at: 3)
/// let event = try recorder.waitForEvent("feed/item_tapped", args: ["position": 3])
/// ```
///
/// Waiting fails with an ``EventRecorderTimeout`` that lists what *was* posted. Works from
/// XCTest (`try`, or the `assert…` helpers) and from Swift Testing (`try await`).
///
/// Identity changes (`MeasurementIdentity`) are recorded apart, in ``identityChanges``: they
/// are not events, and never satisfy a wait for one.
///
/// ```swift
/// MeasurementIdentity.reset(to: center)
/// XCTAssertEqual(recorder.identityChanges, [.reset])
/// ```
///
/// - Important: `MeasurementEventsTesting` links XCTest: add it to test targets only, never to
///   an app or framework target (an app linking XCTest fails to launch on a device).
public final class EventRecorder: @unchecked Sendable {
    // @unchecked: the recorded values, `waiters` and `observers` are only touched while
    // `condition` is locked.
    /// The notification center the recorder observes.
    public let center: NotificationCenter
    private let condition = NSCondition()
    private var recorded: [MeasurementEvent] = []
    private var rejected: [MalformedEventError] = []
    private var identity: [IdentityChange] = []
    private var rejectedIdentity: [MalformedIdentityError] = []
    private var waiters: [Waiter] = []
    private var observers: [any NSObjectProtocol] = []

    private struct Waiter {
        let id: Int
        let expectation: EventExpectation
        let continuation: CheckedContinuation<MeasurementEvent, any Error>
    }

    private var nextWaiterID = 0

    /// Starts recording at once.
    ///
    /// - Parameter center: the center to observe; `.default`, or a test's own center to isolate it.
    public init(center: NotificationCenter = .default) {
        self.center = center
        let events = center.addObserverHandingOff(forName: .measurementEvent) { [weak self] note in
            self?.record(note)
        }
        let identity = center.addObserverHandingOff(forName: .measurementIdentity) { [weak self] note in
            self?.recordIdentity(note)
        }
        observers = [events, identity]
    }

    deinit {
        for observer in observers { center.removeObserver(observer) }
    }

    /// Stops recording; what was recorded stays readable.
    public func stop() {
        condition.lock()
        let observers = self.observers
        self.observers = []
        condition.unlock()
        for observer in observers { center.removeObserver(observer) }
    }

    /// Forgets everything recorded so far.
    public func reset() {
        condition.lock()
        recorded.removeAll()
        rejected.removeAll()
        identity.removeAll()
        rejectedIdentity.removeAll()
        condition.unlock()
    }

    /// The events recorded so far, in the order they were posted.
    public var events: [MeasurementEvent] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    /// The notifications on the uniform name that could not be read as events.
    public var malformed: [MalformedEventError] {
        condition.lock()
        defer { condition.unlock() }
        return rejected
    }

    /// The identity changes posted so far (identify, reset, group), in order.
    public var identityChanges: [IdentityChange] {
        condition.lock()
        defer { condition.unlock() }
        return identity
    }

    /// The notifications on the identity name that could not be read as identity changes.
    public var malformedIdentityChanges: [MalformedIdentityError] {
        condition.lock()
        defer { condition.unlock() }
        return rejectedIdentity
    }

    /// The recorded events with this name.
    ///
    /// - Parameter name: the event name to look for.
    /// - Returns: the matching events, in posting order.
    public func events(named name: EventName) -> [MeasurementEvent] {
        events.filter { $0.name == name }
    }

    private func record(_ notification: Notification) {
        let decoded = Result { () throws(MalformedEventError) in try MeasurementEvent(notification: notification) }
        condition.lock()
        var resumed: [(CheckedContinuation<MeasurementEvent, any Error>, MeasurementEvent)] = []
        switch decoded {
        case .success(let event):
            recorded.append(event)
            PlanCoverageRecording.record(event.name)
            waiters.removeAll { waiter in
                guard waiter.expectation.isSatisfied(by: event) else { return false }
                resumed.append((waiter.continuation, event))
                return true
            }
        case .failure(let error):
            rejected.append(error)
        }
        condition.broadcast()
        condition.unlock()
        for (continuation, event) in resumed { continuation.resume(returning: event) }
    }

    /// Kept apart from events, and never offered to waiters: an identity change is not an event.
    private func recordIdentity(_ notification: Notification) {
        let decoded = Result { () throws(MalformedIdentityError) in try IdentityChange(notification: notification) }
        condition.lock()
        switch decoded {
        case .success(let change): identity.append(change)
        case .failure(let error): rejectedIdentity.append(error)
        }
        condition.unlock()
    }

    // MARK: Waiting

    /// Returns the first recorded event matching `name` (and `args`, `type` when given),
    /// waiting up to `timeout` seconds for it to be posted. Blocks the calling thread.
    ///
    /// - Throws: ``EventRecorderTimeout``, listing every event that was posted.
    ///
    /// - Parameters:
    ///   - name: the event name to wait for.
    ///   - args: args that must be present with these values; others are ignored.
    ///   - type: the event type it must have; `nil` accepts any.
    ///   - timeout: how long to wait, in seconds.
    /// - Returns: the first matching event.
    @discardableResult
    public func waitForEvent(
        _ name: EventName, args: [String: any EventValueConvertible] = [:], type: EventType? = nil,
        timeout: TimeInterval = 1
    ) throws -> MeasurementEvent {
        let expectation = EventExpectation(name: name, args: args.eventArgs, type: type)
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let event = recorded.first(where: expectation.isSatisfied(by:)) { return event }
            if !condition.wait(until: deadline) {
                if let event = recorded.first(where: expectation.isSatisfied(by:)) { return event }
                throw EventRecorderTimeout(
                    expected: expectation, timeout: timeout, posted: recorded, malformed: rejected)
            }
        }
    }

    /// The `async` form of ``waitForEvent(_:args:type:timeout:)``, for Swift Testing and
    /// async XCTest methods. Does not block a thread while waiting.
    ///
    /// - Parameters:
    ///   - name: the event name to wait for.
    ///   - args: args that must be present with these values; others are ignored.
    ///   - type: the event type it must have; `nil` accepts any.
    ///   - timeout: how long to wait, in seconds.
    /// - Returns: the first matching event.
    /// - Throws: ``EventRecorderTimeout``, listing every event that was posted.
    @discardableResult
    public func waitForEvent(
        _ name: EventName, args: [String: any EventValueConvertible] = [:], type: EventType? = nil,
        timeout: TimeInterval = 1
    ) async throws -> MeasurementEvent {
        let expectation = EventExpectation(name: name, args: args.eventArgs, type: type)
        return try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if let event = recorded.first(where: expectation.isSatisfied(by:)) {
                condition.unlock()
                continuation.resume(returning: event)
                return
            }
            let id = nextWaiterID
            nextWaiterID += 1
            waiters.append(Waiter(id: id, expectation: expectation, continuation: continuation))
            condition.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                self?.expire(waiter: id, timeout: timeout)
            }
        }
    }

    private func expire(waiter id: Int, timeout: TimeInterval) {
        condition.lock()
        guard let index = waiters.firstIndex(where: { $0.id == id }) else {
            condition.unlock()
            return
        }
        let waiter = waiters.remove(at: index)
        let error = EventRecorderTimeout(
            expected: waiter.expectation, timeout: timeout, posted: recorded, malformed: rejected)
        condition.unlock()
        waiter.continuation.resume(throwing: error)
    }

    /// Throws when an event matching `name` (and `args`) was recorded: for asserting that a
    /// module did *not* post something. Checks what was recorded so far; it does not wait.
    ///
    /// - Parameters:
    ///   - name: the event name that must not have been posted.
    ///   - args: args that must be present with these values for an event to count; others are ignored.
    /// - Throws: ``UnexpectedEventError`` with the event and everything posted.
    public func expectNoEvent(_ name: EventName, args: [String: any EventValueConvertible] = [:]) throws {
        let expectation = EventExpectation(name: name, args: args.eventArgs, type: nil)
        let all = events
        if let event = all.first(where: expectation.isSatisfied(by:)) {
            throw UnexpectedEventError(unexpected: event, posted: all)
        }
    }
}

/// What a wait looks for.
public struct EventExpectation: Sendable, CustomStringConvertible {
    /// The event name to match.
    public var name: EventName
    /// The args that must be present with these values; others are ignored.
    public var args: EventArgs
    /// The event type to match; `nil` matches any.
    public var type: EventType?

    func isSatisfied(by event: MeasurementEvent) -> Bool {
        event.matches(name, args: args, type: type)
    }

    /// The name, type and args looked for.
    public var description: String {
        var text = quotedInFull(name.rawValue)
        if let type { text += " of type \(type)" }
        if !args.isEmpty { text += " with " + argsDescription(args) }
        return text
    }
}

/// No matching event was posted in time.
public struct EventRecorderTimeout: Error, CustomStringConvertible {
    /// What the wait looked for.
    public let expected: EventExpectation
    /// How long it waited, in seconds.
    public let timeout: TimeInterval
    /// Every event recorded until then, in posting order.
    public let posted: [MeasurementEvent]
    /// The notifications on the event name that could not be read as events.
    public let malformed: [MalformedEventError]

    /// What was expected, and every event that was posted.
    public var description: String {
        var text = "no measurement event \(expected) was posted within \(timeout) s; "
        text += describe(posted)
        if !malformed.isEmpty {
            text += "\nmalformed notifications (\(malformed.count)):"
            for error in malformed { text += "\n  - \(error)" }
        }
        return text
    }
}

/// An event that should not have been posted was.
public struct UnexpectedEventError: Error, CustomStringConvertible {
    /// The event that matched.
    public let unexpected: MeasurementEvent
    /// Every event recorded until then, in posting order.
    public let posted: [MeasurementEvent]

    /// The unexpected event, and every event that was posted.
    public var description: String {
        "measurement event \(unexpected) was posted but should not have been; " + describe(posted)
    }
}

private func describe(_ events: [MeasurementEvent]) -> String {
    guard !events.isEmpty else { return "nothing was posted" }
    return "posted (\(events.count)):" + events.map { "\n  - \($0)" }.joined()
}

/// Expected args as a message shows them: `key=value` pairs sorted by key.
func argsDescription(_ args: EventArgs) -> String {
    args.keys.sorted().map { "\($0)=\(args[$0]!)" }.joined(separator: " ")
}
