import Foundation
import MeasurementEvents

/// Processors as a step of the pipeline: each event through them in order. The app's processors
/// (`EventAggregator(processors:)`) are the built-in ``EventAggregator/BuiltInStep/processors``
/// step; more can be inserted anywhere:
///
/// ```swift
/// configuration.insert(ProcessorsStep([GlobalContextProcessor(["build": "beta"])]), after: .attribution)
/// ```
///
/// The events get their ids first. One that a processor discards leaves the batch there,
/// counted in ``EventAggregator/Diagnostics-swift.struct/discarded`` and recorded in the trail as
/// the processor saw it.
public struct ProcessorsStep: DeliveryStep {
    /// The processors, in order.
    public let processors: [any EventProcessor]

    /// A step that runs `processors` in order.
    ///
    /// - Parameter processors: the processors.
    public init(_ processors: [any EventProcessor]) {
        self.processors = processors
    }

    /// Runs the processors on each event of `batch`.
    ///
    /// - Parameters:
    ///   - batch: the events.
    ///   - aggregator: the aggregator whose pipeline runs.
    public func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
        aggregator.state.withLock { batch.assignIDs(from: &$0.ids) }
        var discarded = batch.discarded
        batch.compactMap { event, violations in
            var event = event
            for processor in processors {
                guard let processed = processor.process(event) else {
                    discarded.append((event, violations))
                    return nil
                }
                event = processed
            }
            return event
        }
        batch.discarded = discarded
    }
}
