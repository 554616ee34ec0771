import Foundation
import MeasurementEvents

// The pipeline's fifth step: personal args hashed, the clear event kept for the trackers that
// take it in clear. Made only where catalogs that declare personal args are registered.

/// The personal-data step (``EventAggregator/BuiltInStep/personalData``).
struct PersonalDataStep: DeliveryStep {
    let hashing: PersonalDataProcessor

    func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
        aggregator.hashPersonalData(&batch, with: hashing)
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
