import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends every event's trail (`EventTrailEntry`) to a running `measurement-events inspect`,
/// so that the developer sees, live, what the app posted, what the aggregator decided and the
/// body each vendor would receive.
///
/// ```swift
/// var configuration = EventAggregator.Configuration()
/// configuration.trail = InspectorConnection.local()  // nil in a release build
/// ```
///
/// Entries wait in a bounded buffer (the oldest are dropped past
/// ``Configuration/maximumPendingEntries``, counted) and leave in batches from the connection's
/// own queue, one request at a time: ``record(_:)`` only appends under a short lock and never
/// blocks on the network. An inspector that cannot be reached costs the batch it missed, counted
/// in ``Diagnostics/failedRequests`` and reported once to ``Configuration/problemHandler``.
/// Nothing runs, allocates or opens a socket until a connection is made.
public final class InspectorConnection: EventTrailObserver, @unchecked Sendable {
    // @unchecked: mutable state is in `state`, behind `lock`; the session is used from `queue`.

    /// How a connection sends.
    public struct Configuration: Sendable {
        /// The inspector's address: `http://127.0.0.1:9400`.
        public var baseURL: URL
        /// The most entries waiting to be sent; past it the oldest are dropped (counted).
        public var maximumPendingEntries = 10_000
        /// The most entries in one request.
        public var maximumBatchSize = 500
        /// How long a first entry waits for others before its batch leaves, in seconds.
        public var batchDelay: TimeInterval = 0.2
        /// How long a request may take, in seconds.
        public var requestTimeout: TimeInterval = 5
        /// Told once when the inspector cannot be reached (or refuses a batch), and once more
        /// after it was reached again and then failed. Never called under a lock.
        public var problemHandler: @Sendable (String) -> Void = { message in
            FileHandle.standardError.write(Data(("MeasurementEventsInspector: " + message + "\n").utf8))
        }

        /// A configuration for the inspector at `baseURL`.
        ///
        /// - Parameter baseURL: where `measurement-events inspect` listens.
        public init(baseURL: URL) {
            self.baseURL = baseURL
        }
    }

    /// What a connection did so far.
    public struct Diagnostics: Sendable, Equatable {
        /// Entries handed to ``InspectorConnection/record(_:)``.
        public var recorded = 0
        /// Entries the inspector accepted.
        public var sent = 0
        /// Entries dropped because ``Configuration/maximumPendingEntries`` were waiting.
        public var droppedAtCap = 0
        /// Entries lost with a request that failed.
        public var lostInFailedRequests = 0
        /// Requests that failed (unreachable inspector, a refusal, a timeout).
        public var failedRequests = 0
    }

    /// The port `measurement-events inspect` listens on unless told otherwise.
    public static let defaultPort = 9_400

    /// This connection's configuration.
    public let configuration: Configuration
    private let queue = DispatchQueue(label: "MeasurementEventsInspector.InspectorConnection")
    private let lock = NSLock()
    private var state = State()
    private var session: URLSession?

    private struct State {
        var pending: [EventTrailEntry] = []
        var start = 0  // pending[..<start] were dropped (oldest first) and await compaction
        var scheduled = false
        var sending = false
        var reportedProblem = false
        var diagnostics = Diagnostics()
    }

    /// A connection with `configuration`.
    ///
    /// - Parameter configuration: where and how to send.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// A connection to the inspector on this machine, in a debug build; `nil` in a release
    /// build unless `enabledInRelease` (the library's own build configuration decides).
    ///
    /// - Parameters:
    ///   - port: the port `measurement-events inspect` listens on.
    ///   - enabledInRelease: whether a release build connects too.
    /// - Returns: a connection, or `nil` when it stays off.
    public static func local(port: Int = defaultPort, enabledInRelease: Bool = false) -> InspectorConnection? {
        #if !DEBUG
            guard enabledInRelease else { return nil }
        #endif
        guard (1...65_535).contains(port), let url = URL(string: "http://127.0.0.1:\(port)") else { return nil }
        return InspectorConnection(configuration: Configuration(baseURL: url))
    }

    /// What the connection did so far.
    public var diagnostics: Diagnostics {
        lock.lock()
        defer { lock.unlock() }
        return state.diagnostics
    }

    /// Queues `entry` for the inspector; returns at once.
    ///
    /// - Parameter entry: what the aggregator decided about one event.
    public func record(_ entry: EventTrailEntry) {
        lock.lock()
        state.diagnostics.recorded += 1
        if state.pending.count - state.start >= configuration.maximumPendingEntries {
            state.start += 1
            state.diagnostics.droppedAtCap += 1
            if state.start >= max(64, configuration.maximumPendingEntries) {
                state.pending.removeFirst(state.start)
                state.start = 0
            }
        }
        state.pending.append(entry)
        let schedules = !state.scheduled && !state.sending
        if schedules { state.scheduled = true }
        lock.unlock()
        if schedules {
            queue.asyncAfter(deadline: .now() + configuration.batchDelay) { [self] in sendNextBatch() }
        }
    }

    /// Blocks until every entry recorded so far was sent (or lost), at most `timeout` seconds:
    /// for a command-line tool or a test that ends right after posting.
    ///
    /// - Parameter timeout: the longest wait, in seconds.
    /// - Returns: whether nothing was left to send.
    @discardableResult
    public func flush(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        queue.async { [self] in sendNextBatch() }
        while Date() < deadline {
            lock.lock()
            let idle = state.pending.count == state.start && !state.sending
            lock.unlock()
            if idle { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    // On `queue`.
    private func sendNextBatch() {
        lock.lock()
        state.scheduled = false
        guard !state.sending, state.pending.count > state.start else {
            lock.unlock()
            return
        }
        let end = min(state.pending.count, state.start + configuration.maximumBatchSize)
        let batch = Array(state.pending[state.start..<end])
        state.pending.removeSubrange(..<end)
        state.start = 0
        state.sending = true
        lock.unlock()

        var request = URLRequest(url: configuration.baseURL.appendingPathComponent("inspector/v1/entries"))
        request.httpMethod = "POST"
        request.timeoutInterval = configuration.requestTimeout
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = InspectorWireFormat.encode(batch)
        if session == nil {
            let sessionConfiguration = URLSessionConfiguration.ephemeral
            sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeout
            sessionConfiguration.httpMaximumConnectionsPerHost = 1
            session = URLSession(configuration: sessionConfiguration)
        }
        let task = session!.dataTask(with: request) { [self] _, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let failure: String? =
                if let error {
                    "the inspector at \(configuration.baseURL.absoluteString) cannot be reached (\(error.localizedDescription)); events are not shown until it runs (`measurement-events inspect`)"
                } else if !(200..<300).contains(status) {
                    "the inspector at \(configuration.baseURL.absoluteString) refused a batch of \(batch.count) entries (HTTP \(status))"
                } else { nil }
            queue.async { [self] in finished(batch.count, failure: failure) }
        }
        task.resume()
    }

    // On `queue`.
    private func finished(_ count: Int, failure: String?) {
        lock.lock()
        state.sending = false
        var report: String?
        if let failure {
            state.diagnostics.failedRequests += 1
            state.diagnostics.lostInFailedRequests += count
            if !state.reportedProblem {
                state.reportedProblem = true
                report = failure
            }
        } else {
            state.diagnostics.sent += count
            state.reportedProblem = false
        }
        let more = state.pending.count > state.start
        lock.unlock()
        if let report { configuration.problemHandler(report) }
        if more { sendNextBatch() }
    }
}
