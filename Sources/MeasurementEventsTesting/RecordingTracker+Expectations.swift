import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Who an event should have been posted by, for ``RecordingTracker/expectEvent(_:userID:sessionID:args:)``.
public enum ExpectedUserID: Sendable, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// Any user id, or none.
    case any
    /// The user id `id`.
    case user(String)
    /// No user id: posted while nobody was signed in (for example after `MeasurementIdentity.reset(to:)`).
    case signedOut

    /// `"u1"` expects the user id `u1`.
    ///
    /// - Parameter value: the expected user id.
    public init(stringLiteral value: String) { self = .user(value) }

    func isSatisfied(by userID: String?) -> Bool {
        switch self {
        case .any: return true
        case .user(let id): return userID == id
        case .signedOut: return userID == nil
        }
    }

    /// How the expectation reads in a failure message.
    public var description: String {
        switch self {
        case .any: return "any user id"
        case .user(let id): return "user id \"\(id)\""
        case .signedOut: return "no user id"
        }
    }
}

extension RecordingTracker {
    /// The first tracked event named `name` that carried `userID` (and `sessionID`, `args` when
    /// given).
    ///
    /// ```swift
    /// try tracker.expectEvent("account/signed_out", userID: "u1")
    /// try tracker.expectEvent("feed/opened", userID: .signedOut)
    /// ```
    ///
    /// - Throws: ``TrackerExpectationError``, listing every event tracked with its identity and
    ///   session, and the identity changes.
    ///
    /// - Parameters:
    ///   - name: the event name to look for.
    ///   - userID: the user id it must carry: `.any` (the default), a user id, or `.signedOut`.
    ///   - sessionID: the session id it must carry; `nil` accepts any.
    ///   - args: args that must be present with these values; others are ignored.
    /// - Returns: the first matching event.
    @discardableResult
    public func expectEvent(
        _ name: EventName, userID: ExpectedUserID = .any, sessionID: Int64? = nil,
        args: [String: any EventValueConvertible] = [:]
    ) throws -> MeasurementEvent {
        let expectedArgs = args.eventArgs
        let events = self.events
        let match = events.first { event in
            event.matches(name, args: expectedArgs) && userID.isSatisfied(by: event.userID)
                && (sessionID == nil || event.sessionID == sessionID)
        }
        if let match { return match }
        var expected = "\(quotedInFull(name.rawValue)) with \(userID)"
        if let sessionID { expected += ", session \(sessionID)" }
        if !expectedArgs.isEmpty { expected += ", " + argsDescription(expectedArgs) }
        throw TrackerExpectationError(expected: expected, tracked: events, identityEvents: identityEvents)
    }

    /// Returns the session shared by the first tracked event of each of `names`.
    ///
    /// ```swift
    /// let session = try tracker.expectSameSession("cart/opened", "checkout/paid")
    /// ```
    ///
    /// - Throws: ``TrackerExpectationError`` when one was not tracked, carried no session, or
    ///   carried another session than the first.
    ///
    /// - Parameter names: the events, each matched by its first tracked occurrence.
    /// - Returns: the shared session id.
    @discardableResult
    public func expectSameSession(_ names: EventName...) throws -> Int64 {
        let events = self.events
        let expected =
            "the first " + names.map { quotedInFull($0.rawValue) }.joined(separator: ", ") + " in one session"
        var session: Int64?
        for name in names {
            guard let id = events.first(where: { $0.name == name })?.sessionID, session == nil || session == id else {
                throw TrackerExpectationError(expected: expected, tracked: events, identityEvents: identityEvents)
            }
            session = id
        }
        guard let session else {
            throw TrackerExpectationError(expected: expected, tracked: events, identityEvents: identityEvents)
        }
        return session
    }
}

/// A ``RecordingTracker`` expectation that was not met: what was expected, and everything that
/// was tracked, with the user id, anonymous id and session each event carried.
public struct TrackerExpectationError: Error, CustomStringConvertible {
    /// What was looked for, in words.
    public let expected: String
    /// Every event the tracker had, in order.
    public let tracked: [MeasurementEvent]
    /// Every identity change the tracker had, in order.
    public let identityEvents: [IdentityEvent]

    /// What was expected, every event tracked with its identity and session, and the identity changes.
    public var description: String {
        var text = "expected \(expected); "
        if tracked.isEmpty {
            text += "nothing was tracked"
        } else {
            text += "tracked (\(tracked.count)):" + tracked.map { "\n  - " + Self.describe($0) }.joined()
        }
        if !identityEvents.isEmpty {
            text += "\nidentity changes (\(identityEvents.count)):"
            for event in identityEvents {
                text +=
                    "\n  - \(Self.describe(event.change)) -> user id \(Self.quote(event.attribution.identity.userID))"
            }
        }
        return text
    }

    static func describe(_ event: MeasurementEvent) -> String {
        var line = "\(event) user_id=\(quote(event.userID)) anonymous_id=\(quote(event.anonymousID))"
        line += " session=" + (event.sessionID.map(String.init) ?? "none")
        return line
    }

    static func describe(_ change: IdentityChange) -> String {
        switch change {
        case .identify(let userID, let traits): return "identify \(quote(userID)) (\(traits.count) traits)"
        case .reset: return "reset"
        case .group(let groupID, let traits): return "group \(quote(groupID)) (\(traits.count) traits)"
        }
    }

    /// Quoted (and escaped) like every message that quotes input; `none` for no value.
    private static func quote(_ value: String?) -> String {
        value.map(quotedInFull) ?? "none"
    }
}
