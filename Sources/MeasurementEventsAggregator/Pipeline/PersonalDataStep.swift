import Foundation
import MeasurementEvents

// The pipeline's fifth step: personal args hashed, the clear event kept for the trackers that
// take it in clear. Made only where catalogs that declare personal args are registered.

/// The personal-data step (``EventAggregator/BuiltInStep/personalData``). Its hashing is a
/// closure made where the catalogs are registered, for the reason `PlanStep` gives: an app that
/// registers no catalog links none of it.
struct PersonalDataStep: DeliveryStep {
    private let hash: @Sendable (inout DeliveryBatch, EventAggregator) -> Void

    init(hashing: PersonalDataProcessor) {
        hash = { batch, aggregator in aggregator.hashPersonalData(&batch, with: hashing) }
    }

    func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
        hash(&batch, aggregator)
    }
}

extension EventAggregator {
    /// Hashes the personal args of the events that have any, keeping each of them as it was
    /// for the trackers that take personal data in clear (``PersonalDataInClearTracker``).
    func hashPersonalData(_ batch: inout DeliveryBatch, with hashing: PersonalDataProcessor) {
        // Without an app-wide salt, the install's (delivery context: the attribution's own).
        let salted =
            configuration.personalDataSalt != nil
            ? hashing
            : PersonalDataProcessor(
                personalArgsByEvent: hashing.personalArgsByEvent, treatment: .hash(salt: attribution.personalDataSalt))
        for index in batch.events.indices where hashing.treatsArgs(of: batch.events[index]) {
            if batch.clear == nil { batch.clear = Array(repeating: nil, count: batch.events.count) }
            batch.clear![index] = batch.events[index]
            // A hashing processor never discards.
            if let hashed = salted.process(batch.events[index]) { batch.events[index] = hashed }
        }
    }
}
