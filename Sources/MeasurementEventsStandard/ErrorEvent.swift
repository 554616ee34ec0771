import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// A non-fatal error the app handled, as an `error/occurred` event: its type, domain and code,
/// and its message only when the app opts in.
///
/// ```swift
/// do { try await feed.refresh() } catch {
///     ErrorEvent(error, context: "feed/refresh").post()
/// }
/// ```
///
/// Not crash reporting: a crash ends the process before anything is posted. Use a crash
/// reporter (MetricKit's `MXCrashDiagnostic` on Apple platforms, or a vendor SDK such as
/// Firebase Crashlytics or Sentry) for crashes.
///
/// ``StandardEventsProcessor`` rate-limits these per `error_type` and session and removes the
/// message unless its `sendsErrorMessages` is set.
public struct ErrorEvent: Sendable, Equatable {
    /// The error's Swift type: `URLError`.
    public var type: String
    /// The NSError domain.
    public var domain: String
    /// The NSError code.
    public var code: Int
    /// The localized description.
    public var message: String
    /// Where it happened, in the app's words.
    public var context: String?

    /// The event for `error`.
    ///
    /// - Parameters:
    ///   - error: the error.
    ///   - context: where it happened: `feed/refresh`.
    public init(_ error: any Error, context: String? = nil) {
        let bridged = error as NSError
        self.type = String(describing: Swift.type(of: error))
        self.domain = bridged.domain
        self.code = bridged.code
        self.message = bridged.localizedDescription
        self.context = context
    }

    /// The event's args; `message` is always included here and removed by the processor
    /// unless the app opted in.
    public var args: EventArgs {
        MeasurementEventsStandardEvents.ErrorOccurred(
            errorType: type, errorDomain: domain, errorCode: code, message: message, context: context
        ).args
    }

    /// Posts `error/occurred`.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public func post(to center: NotificationCenter = .default) {
        MeasurementEvent.post(
            MeasurementEventsStandardEvents.ErrorOccurred.eventName,
            type: MeasurementEventsStandardEvents.ErrorOccurred.eventType, args: args, to: center)
    }
}
