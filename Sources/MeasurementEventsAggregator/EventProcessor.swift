import MeasurementEvents

/// A step an aggregator applies to every kept event before any tracker sees it: add context,
/// remove personal data, sample, label. Return `nil` to discard the event (it is counted).
///
/// Processors run on the aggregator's serial queue, in the order they were given.
public protocol EventProcessor: Sendable {
    /// Returns the event to pass on, changed or not, or `nil` to discard it (counted as `discarded`).
    ///
    /// - Parameter event: the kept event.
    /// - Returns: the event to pass on, or `nil`.
    func process(_ event: MeasurementEvent) -> MeasurementEvent?
}

/// A processor made from a closure.
public struct ClosureProcessor: EventProcessor {
    private let body: @Sendable (MeasurementEvent) -> MeasurementEvent?

    /// A processor that runs `body`.
    ///
    /// - Parameter body: returns the event to pass on, or `nil` to discard it.
    public init(_ body: @escaping @Sendable (MeasurementEvent) -> MeasurementEvent?) {
        self.body = body
    }

    /// Runs the closure.
    ///
    /// - Parameter event: the kept event.
    /// - Returns: what the closure returns.
    public func process(_ event: MeasurementEvent) -> MeasurementEvent? { body(event) }
}
