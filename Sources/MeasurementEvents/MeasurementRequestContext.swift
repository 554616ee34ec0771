import Foundation

/// Who and what the work in progress is for, on a server: the user of one request, its
/// session, and attributes such as the tenant and the request id. Every event posted inside
/// ``run(_:)-(()->Result)`` — across `await`s, in child tasks, and through a synchronous
/// `NotificationCenter` post on the same thread — carries this context's user instead of the
/// aggregator's, with the attributes among its args.
///
/// ```swift
/// let context = MeasurementRequestContext(
///     userID: request.userID, attributes: ["tenant": request.tenant, "request_id": request.id])
/// try await context.run {
///     MeasurementEvent.post("checkout/started")      // carries request.userID
///     MeasurementIdentity.identify(userID: nil, traits: ["plan": "pro"])  // this context only
///     try await handle(request)
/// }
/// ```
///
/// A task-local, like swift-distributed-tracing's `ServiceContext`: code outside any context,
/// an app's, sees none, and its events carry the aggregator's identity as before. `run` works
/// from synchronous code as well (a thread handling a request): Swift's task-locals are bound
/// on the calling thread when there is no task, and read by everything it calls inside.
///
/// - Identity calls inside a context (``MeasurementIdentity``, ``IdentityChange/post(to:)``)
///   change this context only: they are not posted, so no aggregator's identity changes and
///   trackers receive no identify call of their own for them; the events that follow carry the
///   new user and traits. A raw identity notification posted inside a context is applied to the
///   context by each aggregator that receives it.
/// - The context is read on the posting thread when the event is posted: an event carries the
///   identity of its context as it was at that moment, whatever delivery does later.
/// - ``attributes`` are added to each event's args; the event's own arg of the same name wins.
/// - The event's session is ``sessionID`` (none by default): the aggregator's own sessions
///   belong to its own user and are not advanced by a context's events.
/// - What is over the limits is left out and reported once (``Trimmed``), never a crash.
public final class MeasurementRequestContext: Sendable {
    /// The most attributes a context keeps (the first, in key order).
    public static let maximumAttributes = 100
    /// The longest text value of a trait or attribute, in UTF-8 bytes: Amplitude's limit for
    /// property values (https://amplitude.com/docs/apis/analytics/http-v2#upload-limits).
    public static let maximumValueBytes = 1_024

    /// The context of the work in progress; `nil` outside any ``run(_:)-(()->Result)``.
    public static var current: MeasurementRequestContext? {
        // One relaxed load while no context exists (an app): the posting path's only cost.
        live.value > 0 ? bound : nil
    }

    @TaskLocal private static var bound: MeasurementRequestContext?

    /// How many contexts exist. A bound context is alive (its task holds it), so while this is
    /// 0 none is bound anywhere and `current` need not look.
    private static let live = AtomicCounter()

    private let state: LockedValue<Snapshot>

    /// A context.
    ///
    /// - Parameters:
    ///   - userID: the request's user; `nil` when nobody is signed in.
    ///   - anonymousID: the client's anonymous id (a cookie, a header), so that its events join
    ///     the ones the app sent; a new one when `nil`.
    ///   - sessionID: the client's session id (milliseconds since 1970, as the app's); none when `nil`.
    ///   - traits: what is known about the user; scalar values.
    ///   - attributes: what every event of the work carries among its args (tenant, request id).
    public init(
        userID: String? = nil, anonymousID: String? = nil, sessionID: Int64? = nil,
        traits: [String: any EventValueConvertible] = [:], attributes: [String: any EventValueConvertible] = [:]
    ) {
        var findings: [String] = []
        let checkedTraits = Self.checked(traits, "trait", &findings)
        let identity = Self.bounded(
            EventIdentity(
                userID: userID, anonymousID: anonymousID ?? UUID().uuidString.lowercased(), traits: checkedTraits),
            &findings)
        var attributes = Self.checked(attributes, "attribute", &findings)
        if attributes.count > Self.maximumAttributes {
            findings.append(
                "\(attributes.count) attributes, expected at most \(Self.maximumAttributes): kept the first "
                    + "\(Self.maximumAttributes) by name, left out \(attributes.count - Self.maximumAttributes)")
            attributes = EventArgs(
                uniqueKeysWithValues: attributes.keys.sorted().prefix(Self.maximumAttributes).map {
                    ($0, attributes[$0]!)
                })
        }
        state = LockedValue(
            Snapshot(identity: identity, sessionID: sessionID, attributes: attributes, findings: findings))
        Self.live.add(1)
    }

    deinit {
        Self.live.add(-1)
    }

    /// Runs `body` with this context as the current one (synchronous code, on this thread).
    ///
    /// - Parameter body: the work of the request.
    /// - Returns: what `body` returns.
    public func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        try Self.$bound.withValue(self, operation: body)
    }

    /// Runs `body` with this context as the current one, across its `await`s and in the child
    /// tasks it makes.
    ///
    /// - Parameters:
    ///   - isolation: the caller's actor; leave the default.
    ///   - body: the work of the request.
    /// - Returns: what `body` returns.
    public func run<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await Self.$bound.withValue(self, operation: body, isolation: isolation)
    }

    /// Who the work is for now: the identity its events carry.
    public var identity: EventIdentity { state.withLock { $0.identity } }
    /// The session its events carry, if any.
    public var sessionID: Int64? { state.withLock { $0.sessionID } }
    /// What its events carry among their args.
    public var attributes: EventArgs { state.withLock { $0.attributes } }

    /// Applies an identity call made inside this context, to this context only.
    package func apply(_ change: IdentityChange) {
        state.withLock { snapshot in
            // What no event reported yet goes on with the next snapshot.
            var findings = snapshot.unreportedFindings
            let identity = Self.bounded(snapshot.identity.applying(change), &findings)
            snapshot = Snapshot(
                identity: identity, sessionID: snapshot.sessionID, attributes: snapshot.attributes,
                findings: findings)
        }
    }

    /// What the events posted now carry: one object until the context changes.
    package var snapshot: Snapshot { state.withLock { $0 } }

    /// The context as it is between two changes, shared by the events posted meanwhile.
    package final class Snapshot: Sendable {
        /// The identity and session, as events carry them (the aggregator adds the device).
        package let attribution: AttributionStorage
        package let attributes: EventArgs
        /// What the change that made this snapshot left out; nil when nothing was.
        package let trimmed: Trimmed?
        /// 1 once an aggregator reported `trimmed` (`takeTrimmed()`).
        private let reported = AtomicCounter()

        var identity: EventIdentity { attribution.value.identity }
        var sessionID: Int64? { attribution.value.sessionID }

        init(identity: EventIdentity, sessionID: Int64?, attributes: EventArgs, findings: [String]) {
            attribution = AttributionStorage(EventAttribution(identity: identity, sessionID: sessionID))
            self.attributes = attributes
            trimmed = findings.isEmpty ? nil : Trimmed(findings: findings)
        }

        var unreportedFindings: [String] { reported.value == 0 ? trimmed?.findings ?? [] : [] }

        /// What was left out, the first time it is asked for (reported once, by one aggregator).
        package func takeTrimmed() -> Trimmed? {
            guard let trimmed, reported.exchange(1) == 0 else { return nil }
            return trimmed
        }
    }

    /// What a context left out because it was over its limits: too many attributes or traits,
    /// a text value or an id too long, a value that is not a valid arg. Reported once to each
    /// aggregator's problem handler that receives an event of the context.
    public struct Trimmed: Sendable, Hashable, CustomStringConvertible {
        /// Each thing left out, in a sentence: what, how large, what was expected, what was done.
        public var findings: [String]

        /// A report.
        ///
        /// - Parameter findings: each thing left out, in a sentence.
        public init(findings: [String]) { self.findings = findings }

        /// The findings in one line.
        public var description: String {
            "a request context was over its limits: " + findings.joined(separator: "; ")
        }
    }

    // MARK: Limits

    /// `values` as args, without the values that cannot be one or are too long (each named).
    private static func checked(
        _ values: [String: any EventValueConvertible], _ kind: String, _ findings: inout [String]
    ) -> EventArgs {
        var args = EventArgs(minimumCapacity: values.count)
        for (key, value) in values {
            switch value.checkedEventValue {
            case .success(.double(let double)) where !double.isFinite:
                findings.append("\(kind) \"\(key)\" is \(double), expected a finite number: left out")
            case .success(let scalar):
                if let rejection = tooLong(scalar) {
                    findings.append("\(kind) \"\(key)\" \(rejection): left out")
                } else {
                    args[key] = scalar
                }
            case .failure(let rejection):
                findings.append("\(kind) \"\(key)\" cannot be an arg (\(rejection)): left out")
            }
        }
        return args
    }

    private static func tooLong(_ value: EventValue) -> String? {
        guard case .string(let text) = value, text.utf8.count > maximumValueBytes else { return nil }
        return "has \(text.utf8.count) bytes, expected at most \(maximumValueBytes)"
    }

    /// `identity` within the limits: ids no longer than ``IdentityChange/maximumIDBytes``,
    /// at most ``IdentityChange/maximumTraits`` traits (the first by name), text values no
    /// longer than ``maximumValueBytes``.
    private static func bounded(_ identity: EventIdentity, _ findings: inout [String]) -> EventIdentity {
        var identity = identity
        let maximumID = IdentityChange.maximumIDBytes
        if let userID = identity.userID, userID.utf8.count > maximumID {
            findings.append(
                "user id has \(userID.utf8.count) bytes, expected at most \(maximumID): left out (no user id)")
            identity.userID = nil
        }
        if identity.anonymousID.utf8.count > maximumID {
            findings.append(
                "anonymous id has \(identity.anonymousID.utf8.count) bytes, expected at most \(maximumID): "
                    + "replaced by a new one")
            identity.anonymousID = UUID().uuidString.lowercased()
        }
        if let groupID = identity.groupID, groupID.utf8.count > maximumID {
            findings.append("group id has \(groupID.utf8.count) bytes, expected at most \(maximumID): left out")
            identity.groupID = nil
            identity.groupTraits = [:]
        }
        identity.traits = boundedTraits(identity.traits, "trait", &findings)
        identity.groupTraits = boundedTraits(identity.groupTraits, "group trait", &findings)
        return identity
    }

    private static func boundedTraits(_ traits: EventArgs, _ kind: String, _ findings: inout [String]) -> EventArgs {
        var traits = traits
        for (key, value) in traits {
            if let rejection = tooLong(value) {
                findings.append("\(kind) \"\(key)\" \(rejection): left out")
                traits[key] = nil
            }
        }
        let maximum = IdentityChange.maximumTraits
        guard traits.count > maximum else { return traits }
        findings.append(
            "\(traits.count) \(kind)s, expected at most \(maximum): kept the first \(maximum) by name, "
                + "left out \(traits.count - maximum)")
        return EventArgs(uniqueKeysWithValues: traits.keys.sorted().prefix(maximum).map { ($0, traits[$0]!) })
    }
}
