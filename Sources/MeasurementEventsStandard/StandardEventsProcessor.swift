import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// The delivery-side half of the standard events: checks them, rate-limits errors, stamps
/// timed events with their duration and every event with the session's campaign.
///
/// ```swift
/// let standard = StandardEventsProcessor(problemHandler: { print($0) })
/// let aggregator = EventAggregator(
///     filter: EventFilter(allow: MeasurementEventsStandardEvents.allNames.map(EventPattern.init) + …),
///     trackers: [tracker], processors: [standard])
/// ```
///
/// It runs where every kept event passes, on the aggregator's serial queue, in posting order
/// and after the event got its timestamp (from the aggregator's clock) and session. So:
/// - **Checks.** An empty screen name, an order whose amounts are not decimal text, whose
///   quantity is below 1 or whose currency is not ISO 4217, a deep link over 8 KB or with
///   control characters or a UTM parameter over 256 characters: the event is dropped
///   (counted in the aggregator's `discarded` and in ``counts``) and ``problemHandler`` is
///   told what was found and expected. Nothing else is dropped.
/// - **Errors.** At most ``maximumErrorsPerType`` `error/occurred` events per `error_type`
///   and session; the rest are dropped and counted (``Counts/rateLimitedErrors``); the first
///   drop of a type in a session is reported. The `message` arg is removed unless
///   ``sendsErrorMessages`` is true.
/// - **Timing.** `timer/started` (``Timers/start(_:to:)``) is consumed (the aggregator
///   counts it in `discarded`, as every event a processor keeps from trackers); the next event of
///   that name carries `duration`, the seconds between the two timestamps. A timer still
///   running when its session ends is dropped, counted (``Counts/droppedTimers``) and
///   reported at the first event of the next session.
/// - **Campaign.** A valid `app/deep_link_opened` with UTM parameters makes them the
///   session's campaign: every later event of the session carries the `utm_*` args
///   (unless it has its own), which encoders send where each vendor documents a campaign.
public final class StandardEventsProcessor: EventProcessor, Sendable {
    /// How many events of each kind were dropped or changed.
    public struct Counts: Sendable, Equatable {
        /// Events dropped because an arg was invalid (empty screen, bad order, bad deep link).
        public var invalid = 0
        /// `error/occurred` events over the per-type limit.
        public var rateLimitedErrors = 0
        /// Timers started and never finished in their session.
        public var droppedTimers = 0
        /// Events that received a `duration`.
        public var timedEvents = 0
    }

    /// The most `error/occurred` events of one `error_type` per session.
    public let maximumErrorsPerType: Int
    /// Whether `error/occurred` keeps its `message` arg (off: messages often hold personal data).
    public let sendsErrorMessages: Bool
    /// Told, outside any lock and on the aggregator's queue, of every dropped event.
    public let problemHandler: (@Sendable (StandardEventProblem) -> Void)?

    private let state = LockedValue(State())

    private struct State {
        var counts = Counts()
        var session: Int64?
        var errorsByType: [String: Int] = [:]
        var timers: [EventName: (start: Date, session: Int64?)] = [:]
        var campaign: EventArgs = [:]
    }

    /// A processor for the standard events.
    ///
    /// - Parameters:
    ///   - maximumErrorsPerType: the most `error/occurred` events per error type and session.
    ///   - sendsErrorMessages: whether error messages are sent.
    ///   - problemHandler: told of every dropped event.
    public init(
        maximumErrorsPerType: Int = 10, sendsErrorMessages: Bool = false,
        problemHandler: (@Sendable (StandardEventProblem) -> Void)? = nil
    ) {
        self.maximumErrorsPerType = max(0, maximumErrorsPerType)
        self.sendsErrorMessages = sendsErrorMessages
        self.problemHandler = problemHandler
    }

    /// What was dropped or changed so far.
    public var counts: Counts { state.withLock { $0.counts } }

    /// Checks, rate-limits, times and stamps `event`.
    ///
    /// - Parameter event: a kept event, stamped with its time and session.
    /// - Returns: the event to pass on, or `nil` when it was dropped or consumed.
    public func process(_ event: MeasurementEvent) -> MeasurementEvent? {
        var problems: [StandardEventProblem] = []
        let result = state.withLock { state in step(event, state: &state, problems: &problems) }
        // Outside the lock: the handler is the app's code.
        if let problemHandler { for problem in problems { problemHandler(problem) } }
        return result
    }

    private func step(
        _ event: MeasurementEvent, state: inout State, problems: inout [StandardEventProblem]
    ) -> MeasurementEvent? {
        let session = event.sessionID
        if session != state.session {
            for (name, timer) in state.timers where timer.session != session {
                state.timers[name] = nil
                state.counts.droppedTimers += 1
                problems.append(
                    StandardEventProblem(
                        event: name, arg: "timer", found: "a timer started and never finished in its session",
                        expected: "the event posted in the session the timer started in; the timer was dropped"))
            }
            state.session = session
            state.errorsByType = [:]
            state.campaign = [:]
        }
        if let problem = Self.check(event) {
            state.counts.invalid += 1
            problems.append(problem)
            return nil
        }
        var event = event
        switch event.name {
        case MeasurementEventsStandardEvents.TimerStarted.eventName:
            let timed = EventName(event.args["event"]?.stringValue ?? "")
            state.timers[timed] = (event.timestamp, session)
            return nil
        case MeasurementEventsStandardEvents.ErrorOccurred.eventName:
            let type = event.args["error_type"]?.stringValue ?? ""
            let count = state.errorsByType[type, default: 0] + 1
            state.errorsByType[type] = count
            if count > maximumErrorsPerType {
                state.counts.rateLimitedErrors += 1
                if count == maximumErrorsPerType + 1 {
                    problems.append(
                        StandardEventProblem(
                            event: event.name, arg: "rate limit",
                            found:
                                "more than \(maximumErrorsPerType) errors of type \(quotedInFull(type)) in this session",
                            expected: "at most \(maximumErrorsPerType); later ones are dropped and counted"))
                }
                return nil
            }
            if !sendsErrorMessages { event.args["message"] = nil }
        case MeasurementEventsStandardEvents.AppDeepLinkOpened.eventName:
            let campaign = event.args.filter { DeepLink.utmArgs.contains($0.key) }
            if !campaign.isEmpty { state.campaign = campaign }
        default: break
        }
        if let timer = state.timers.removeValue(forKey: event.name) {
            event.args["duration"] = .double(max(0, event.timestamp.timeIntervalSince(timer.start)))
            state.counts.timedEvents += 1
        }
        for (key, value) in state.campaign where event.args[key] == nil { event.args[key] = value }
        return event
    }

    /// The problem with a standard event's args, or `nil` when they are fine (or the event is
    /// not one of the checked ones).
    static func check(_ event: MeasurementEvent) -> StandardEventProblem? {
        switch event.name {
        case MeasurementEventsStandardEvents.ScreenViewed.eventName:
            let screen = event.args["screen"]?.stringValue ?? ""
            guard screen.isEmpty else { return nil }
            return StandardEventProblem(
                event: event.name, arg: "screen",
                found: event.args["screen"].map { quotedInFull("\($0)") } ?? "nothing",
                expected: "a non-empty screen name; the screen view was dropped")
        case MeasurementEventsStandardEvents.OrderCompleted.eventName:
            do {
                _ = try Order(validating: event)
                return nil
            } catch {
                return StandardEventProblem(
                    event: error.event, arg: error.arg, found: error.found,
                    expected: error.expected + "; the order was dropped")
            }
        case MeasurementEventsStandardEvents.AppDeepLinkOpened.eventName:
            return DeepLink.check(event)
        case MeasurementEventsStandardEvents.TimerStarted.eventName:
            let name = event.args["event"]?.stringValue ?? ""
            guard EventName(name).validationFailure != nil else { return nil }
            return StandardEventProblem(
                event: event.name, arg: "event", found: quotedInFull(name),
                expected: "a valid event name; the timer was not started")
        default:
            return nil
        }
    }
}
