import MeasurementEvents

// Hand-written mirror of Events/ImpressionTracking.json until the catalog generator lands;
// it will be replaced by the generated `events_ImpressionTracking.swift`, which declares the
// same enum (public there). Every use of an event name in this module goes through it.
enum ImpressionTrackingEvents {
    /// An item stayed visible long enough to count as an impression.
    static let impressionItemViewed: EventName = "impression/item_viewed"
}
