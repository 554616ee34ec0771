import MeasurementEvents

/// Adds app-wide args (app version, build, OS, session id) to every event. An event's own
/// args always win: a context arg is only added when the event has no arg of that name.
///
/// ```swift
/// let context = GlobalContextProcessor(["app_version": "4.2.0", "os": "iOS 17.4"])
/// // or, for values that change (a session id):
/// let session = GlobalContextProcessor { ["session_id": .string(Session.current.id)] }
/// ```
public struct GlobalContextProcessor: EventProcessor {
    private let context: @Sendable () -> EventArgs

    /// Fixed args.
    ///
    /// - Parameter args: added to every event.
    public init(_ args: EventArgs) {
        context = { args }
    }

    /// Args read for each event; keep the closure cheap, it runs once per event.
    ///
    /// - Parameter context: returns the args to add to each event.
    public init(_ context: @escaping @Sendable () -> EventArgs) {
        self.context = context
    }

    /// Adds the context's args to `event`; the event's own args win.
    ///
    /// - Parameter event: the kept event.
    /// - Returns: the event with the context's args.
    public func process(_ event: MeasurementEvent) -> MeasurementEvent? {
        let args = context()
        guard !args.isEmpty else { return event }
        var event = event
        event.args.merge(args) { own, _ in own }
        return event
    }
}
