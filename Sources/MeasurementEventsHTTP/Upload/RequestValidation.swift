import Foundation

/// An encoder whose request bodies a server also checks (GA4's validation server,
/// `/debug/mp/collect`): it makes the check. This is how `MeasurementEventsHTTP` knows of
/// GA4's validation without linking it, or the JSON parser that reads its replies, into an app
/// that sends to another vendor (`GA4Validator` is in `MeasurementEventsGA4`).
package protocol ServerValidatedEncoder: BatchEncoder {
    /// The check of each request this encoder's tracker sends, or nil when it is off in this
    /// build.
    ///
    /// - Parameters:
    ///   - transport: the tracker's transport, to send each body to the checking server.
    ///   - timeout: the tracker's request timeout.
    ///   - report: receives each message of the check, for the tracker's log handler.
    func makeRequestValidator(
        transport: any HTTPTransport, timeout: TimeInterval, report: @escaping @Sendable (String) -> Void
    ) -> (any RequestValidator)?
}

/// Checks each request an HTTP tracker sends, beside it: what it finds is reported, and the
/// request is sent whatever it finds.
package protocol RequestValidator: Sendable {
    /// Checks `request`, as it is sent.
    func check(_ request: HTTPRequest)
}
