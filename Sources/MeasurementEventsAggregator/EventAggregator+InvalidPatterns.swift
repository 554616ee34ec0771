import MeasurementEvents

extension EventAggregator {
    /// Tells the problem handler about each entry of `filter` that matches nothing, so that a
    /// typo such as `cart*` (for `cart/*`) is seen when the aggregator starts, not only in
    /// ``EventFilter/invalidPatterns``. Call it outside the aggregator's lock: the handler is user code.
    func reportInvalidPatterns(of filter: EventFilter) {
        guard let handler = configuration.problemHandler else { return }
        for text in filter.invalidPatterns {
            do {
                _ = try EventPattern.parse(text)
            } catch {
                handler(.invalidPattern(error))
            }
        }
    }
}
