/// A step an aggregator applies to every kept event before any tracker sees it: add context,
/// remove personal data, sample, label. Return `nil` to discard the event (it is counted).
///
/// Processors run on the aggregator's serial queue, in the order they were given.
public protocol EventProcessor: Sendable {
    func process(_ event: MeasurementEvent) -> MeasurementEvent?
}

/// A processor made from a closure.
public struct ClosureProcessor: EventProcessor {
    private let body: @Sendable (MeasurementEvent) -> MeasurementEvent?

    public init(_ body: @escaping @Sendable (MeasurementEvent) -> MeasurementEvent?) {
        self.body = body
    }

    public func process(_ event: MeasurementEvent) -> MeasurementEvent? { body(event) }
}
