import Foundation
import MeasurementEvents

/// A period of use: it starts with the first event and ends after ``SessionRules/timeout``
/// without events, or after that long in the background.
public struct Session: Sendable, Hashable, Codable {
    /// The start time in milliseconds since 1970 (Amplitude's convention); always greater than
    /// the previous session's id.
    public var id: Int64
    /// When the session started.
    public var startedAt: Date
    /// The last event, or the last move to or from the background.
    public var lastActivityAt: Date

    /// A session.
    ///
    /// - Parameters:
    ///   - id: the start time in milliseconds since 1970.
    ///   - startedAt: when it started.
    ///   - lastActivityAt: the last event or move to or from the background.
    public init(id: Int64, startedAt: Date, lastActivityAt: Date) {
        self.id = id
        self.startedAt = startedAt
        self.lastActivityAt = lastActivityAt
    }
}

/// How sessions are cut.
public struct SessionRules: Sendable, Equatable {
    /// How long without events (or in the background) ends a session. 30 minutes by default,
    /// as Segment, Amplitude and GA4.
    public var timeout: TimeInterval = 30 * 60
    /// Whether the aggregator sends ``startedEventName`` and ``endedEventName`` events to its
    /// trackers when a session starts or ends. Off by default.
    public var emitsEvents = false
    /// The name of the event sent when a session starts.
    public var startedEventName: EventName = "session/started"
    /// The name of the event sent when a session ends.
    public var endedEventName: EventName = "session/ended"
    /// Whether the aggregator keeps sessions at all. On by default; off in
    /// ``EventAggregator/Configuration-swift.struct/server``: a server's requests are not an
    /// app's visits, so its events carry no session id (a request context may give one) and no
    /// session events are made.
    public var isEnabled = true

    /// Rules.
    ///
    /// - Parameters:
    ///   - timeout: how long without events (or in the background) ends a session, in seconds.
    ///   - emitsEvents: whether session start and end events are sent to trackers.
    public init(timeout: TimeInterval = 30 * 60, emitsEvents: Bool = false) {
        self.timeout = timeout
        self.emitsEvents = emitsEvents
    }
}

/// The session state machine: pure, driven by the times it is given, so tests need no clock.
struct SessionTimeline: Sendable, Equatable {
    var rules: SessionRules
    private(set) var current: Session?
    private(set) var isInBackground = false
    /// The latest session's id, kept after it ends so that ids only grow.
    private var latestID: Int64?

    /// What one step did: the session that ended, the one that started.
    struct Transition: Equatable {
        var ended: Session?
        var started: Session?
        var isEmpty: Bool { ended == nil && started == nil }
    }

    init(rules: SessionRules, restored: Session? = nil) {
        self.rules = rules
        self.current = rules.isEnabled ? restored : nil
        self.latestID = restored?.id
    }

    /// An event at `date`: continues the session, or ends it and starts another; nothing when
    /// sessions are off.
    mutating func event(at date: Date) -> Transition {
        guard rules.isEnabled else { return Transition() }
        if let session = current, isAlive(session, at: date) {
            if date > session.lastActivityAt { current!.lastActivityAt = date }
            return Transition()
        }
        let ended = current
        let milliseconds = Self.milliseconds(date)
        var id = milliseconds
        if let latestID, id <= latestID { id = latestID == .max ? latestID : latestID + 1 }
        latestID = id
        current = Session(id: id, startedAt: date, lastActivityAt: date)
        return Transition(ended: ended, started: current)
    }

    /// The app went to the background at `date`: the session's inactivity runs from here.
    mutating func enterBackground(at date: Date) {
        isInBackground = true
        touch(at: date)
    }

    /// The app came back at `date`: a session that spent a timeout or longer in the background
    /// has ended (the next event starts a new one).
    mutating func enterForeground(at date: Date) -> Transition {
        isInBackground = false
        guard let session = current else { return Transition() }
        if isAlive(session, at: date) {
            touch(at: date)
            return Transition()
        }
        current = nil
        return Transition(ended: session)
    }

    private mutating func touch(at date: Date) {
        guard let session = current, isAlive(session, at: date), date > session.lastActivityAt else { return }
        current!.lastActivityAt = date
    }

    private func isAlive(_ session: Session, at date: Date) -> Bool {
        date.timeIntervalSince(session.lastActivityAt) < rules.timeout
    }

    /// Milliseconds since 1970, clamped (a date from outside is not trusted).
    static func milliseconds(_ date: Date) -> Int64 { UnixTime.milliseconds(date) }
}
