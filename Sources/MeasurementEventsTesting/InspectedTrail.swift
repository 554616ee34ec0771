import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One event as an inspector reports it: its name, where it ended and its args as text.
/// The same record in-process (``TrailRecorder``) and from a running
/// `measurement-events inspect` (``InspectorClient``), so one set of assertions serves both.
public struct InspectedTrailEvent: Sendable, Hashable, CustomStringConvertible {
    /// The event's name.
    public var name: String
    /// `forwarded`, `filtered_out`, `malformed`, `discarded_without_consent`,
    /// `discarded_by_processor`, `held`, `dropped` (the inspector's JSON API), or `received`
    /// for a request to one of its vendor endpoints.
    public var status: String
    /// Why, for the statuses that say (`filtered_out`, `malformed`, `dropped`).
    public var reason: String?
    /// The args as the inspector shows them (values as text).
    public var args: [String: String]
    /// The purposes that had a consent of their own when the event reached the destinations:
    /// `["advertising": "denied"]`; empty when the app set none.
    public var purposes: [String: String] = [:]
    /// What each destination decided, by destination name: `forwarded`, `not sent: purpose
    /// advertising denied`, `filtered by the destination: …`.
    public var decisions: [String: String] = [:]

    /// A record.
    ///
    /// - Parameters:
    ///   - name: the event's name.
    ///   - status: where it ended.
    ///   - reason: why, when the status carries one.
    ///   - args: its args as text.
    public init(name: String, status: String, reason: String? = nil, args: [String: String] = [:]) {
        self.name = name
        self.status = status
        self.reason = reason
        self.args = args
    }

    /// The record of an aggregator's trail entry, as the inspector stores it.
    ///
    /// - Parameter entry: what the aggregator decided about one event.
    public init(_ entry: EventTrailEntry) {
        var args: [String: String] = [:]
        for (key, value) in entry.event.args { args[key] = value.description }
        // The same words as MeasurementEventsInspector's wire format (the inspector's JSON API).
        let (status, reason): (String, String?) =
            switch entry.fate {
            case .forwarded: ("forwarded", nil)
            case .filteredOut(let reason): ("filtered_out", reason)
            case .malformed(let reason): ("malformed", reason)
            case .discardedWithoutConsent: ("discarded_without_consent", nil)
            case .discardedByProcessor: ("discarded_by_processor", nil)
            case .held: ("held", nil)
            case .dropped(let reason): ("dropped", reason)
            case .trackerProblem(let problem): ("tracker_problem", problem)
            }
        self.init(name: entry.event.name.rawValue, status: status, reason: reason, args: args)
        for (purpose, consent) in entry.purposeConsents { purposes[purpose.rawValue] = consent.rawValue }
        for outcome in entry.trackers { decisions[outcome.destination] = outcome.decision.description }
    }

    /// `feed/item_tapped [forwarded] item_id=42`.
    public var description: String {
        var line = "\(name) [\(status)\(reason.map { ": \($0)" } ?? "")]"
        for key in args.keys.sorted() { line += " \(key)=\(args[key]!)" }
        return line
    }
}

/// A source of ``InspectedTrailEvent``s that tests assert against: ``TrailRecorder``
/// in-process, ``InspectorClient`` for a running inspector. The assertions
/// (``expectEvent(named:status:args:)``, ``events(named:status:)``) are written once, here.
public protocol InspectedTrailSource: Sendable {
    /// Every event the source holds, oldest first.
    ///
    /// - Returns: the events.
    /// - Throws: when a running inspector cannot be asked.
    func inspectedEvents() throws -> [InspectedTrailEvent]
}

extension InspectedTrailSource {
    /// The events named `name` (every name when `nil`) with `status` (every status when `nil`).
    ///
    /// - Parameters:
    ///   - name: the event name to match, or `nil`.
    ///   - status: the status to match, or `nil`.
    /// - Returns: the matching events, oldest first.
    /// - Throws: when a running inspector cannot be asked.
    public func events(named name: String? = nil, status: String? = nil) throws -> [InspectedTrailEvent] {
        try inspectedEvents().filter { (name == nil || $0.name == name) && (status == nil || $0.status == status) }
    }

    /// The newest event named `name` with `status` whose args include `args`.
    ///
    /// - Parameters:
    ///   - name: the event's name.
    ///   - status: where it must have ended; `forwarded` by default.
    ///   - args: args it must carry, compared as text.
    /// - Returns: the event.
    /// - Throws: ``InspectedTrailMismatch`` listing every event of that name that was seen.
    @discardableResult
    public func expectEvent(
        named name: String, status: String = "forwarded", args: [String: String] = [:]
    ) throws -> InspectedTrailEvent {
        let all = try inspectedEvents()
        let match = all.last { event in
            event.name == name && event.status == status && args.allSatisfy { event.args[$0.key] == $0.value }
        }
        guard let match else {
            throw InspectedTrailMismatch(
                expected: name, status: status, args: args, seen: all.filter { $0.name == name })
        }
        return match
    }
}

/// No event matched an expectation; lists the events of that name that were seen.
public struct InspectedTrailMismatch: Error, CustomStringConvertible {
    /// The expected name.
    public var expected: String
    /// The expected status.
    public var status: String
    /// The expected args.
    public var args: [String: String]
    /// The events of that name that were seen.
    public var seen: [InspectedTrailEvent]

    /// `no feed/x [forwarded] with item=1; seen: …`.
    public var description: String {
        let wanted = args.keys.sorted().map { "\($0)=\(args[$0]!)" }.joined(separator: " ")
        let list = seen.isEmpty ? "no event of that name" : seen.map(\.description).joined(separator: "; ")
        return "no \(expected) [\(status)]\(wanted.isEmpty ? "" : " with \(wanted)"); seen: \(list)"
    }
}

/// Records an aggregator's trail in-process: `configuration.trail = recorder`.
///
/// ```swift
/// let recorder = TrailRecorder()
/// configuration.trail = recorder
/// // … post …
/// try recorder.expectEvent(named: "debug/x", status: "filtered_out")
/// ```
public final class TrailRecorder: EventTrailObserver, InspectedTrailSource, @unchecked Sendable {
    // @unchecked: `recorded` is only touched under `lock`.
    private let lock = NSLock()
    private var recorded: [InspectedTrailEvent] = []

    /// An empty recorder.
    public init() {}

    /// Records one entry.
    ///
    /// - Parameter entry: what the aggregator decided about one event.
    public func record(_ entry: EventTrailEntry) {
        let event = InspectedTrailEvent(entry)
        lock.lock()
        recorded.append(event)
        lock.unlock()
    }

    /// Every entry recorded so far, oldest first.
    ///
    /// - Returns: the events.
    public func inspectedEvents() -> [InspectedTrailEvent] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }
}

/// Asks a running `measurement-events inspect` what it received (`GET /api/events`), for CI
/// jobs that run the app against it, as Snowplow Micro's API serves.
///
/// ```swift
/// let inspector = InspectorClient(baseURL: URL(string: "http://127.0.0.1:9400")!)
/// try inspector.expectEvent(named: "feed/item_tapped", args: ["item_id": "42"])
/// try inspector.reset()
/// ```
public struct InspectorClient: InspectedTrailSource {
    /// The inspector's address.
    public var baseURL: URL
    /// How long one request may take, in seconds.
    public var timeout: TimeInterval

    /// The inspector could not be asked, or answered something else than its JSON.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the URL.
        public var description: String
    }

    /// A client of the inspector at `baseURL`.
    ///
    /// - Parameters:
    ///   - baseURL: where `measurement-events inspect` listens.
    ///   - timeout: how long one request may take, in seconds.
    public init(baseURL: URL, timeout: TimeInterval = 10) {
        self.baseURL = baseURL
        self.timeout = timeout
    }

    /// Every event the inspector holds, oldest first.
    ///
    /// - Returns: the events.
    /// - Throws: ``Failure``.
    public func inspectedEvents() throws -> [InspectedTrailEvent] {
        let data = try send(path: "api/events", method: "GET")
        guard let page = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let events = page["events"] as? [[String: Any]]
        else { throw Failure(description: "\(baseURL.absoluteString)/api/events did not answer {\"events\": [...]}") }
        return events.map { object in
            var event = InspectedTrailEvent(
                name: object["name"] as? String ?? "", status: object["status"] as? String ?? "",
                reason: object["reason"] as? String, args: object["args"] as? [String: String] ?? [:])
            event.purposes = object["purposes"] as? [String: String] ?? [:]
            for tracker in object["trackers"] as? [[String: Any]] ?? [] {
                guard let destination = tracker["destination"] as? String ?? tracker["tracker"] as? String,
                    let decision = tracker["decision"] as? String
                else { continue }
                event.decisions[destination] = decision
            }
            return event
        }
    }

    /// Forgets every event the inspector holds (`POST /api/reset`).
    ///
    /// - Throws: ``Failure``.
    public func reset() throws {
        _ = try send(path: "api/reset", method: "POST")
    }

    private func send(path: String, method: String) throws -> Data {
        var request = URLRequest(url: baseURL.appendingPathComponent(path), timeoutInterval: timeout)
        request.httpMethod = method
        if method == "POST" {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data("{}".utf8)
        }
        let address = request.url?.absoluteString ?? path
        let result = ResultBox()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            if let error {
                result.set(.failure(Failure(description: "\(address): \(error.localizedDescription)")))
            } else if status != 200 {
                result.set(.failure(Failure(description: "\(address) answered HTTP \(status)")))
            } else {
                result.set(.success(data ?? Data()))
            }
            done.signal()
        }.resume()
        done.wait()
        return try result.get()
    }

    private final class ResultBox: @unchecked Sendable {
        // @unchecked: written once by the session's callback before the semaphore is signalled.
        private var value: Result<Data, Failure> = .failure(Failure(description: "no answer"))
        func set(_ result: Result<Data, Failure>) { value = result }
        func get() throws -> Data { try value.get() }
    }
}
