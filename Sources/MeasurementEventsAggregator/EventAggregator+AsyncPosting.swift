import Foundation
import MeasurementEvents

extension EventAggregator {
    /// Posts an event on ``center`` as `MeasurementEvent.post(_:type:category:args:to:file:line:)`
    /// does, after suspending the calling task until there is room under
    /// ``Configuration/maximumInFlightEvents``: back-pressure for a server's request handlers,
    /// which slow down instead of losing events while delivery catches up. Each post that had to
    /// suspend is counted in ``Diagnostics/postsThatSuspendedForRoom``. The room is held for this
    /// post, so it is never dropped for the bound, whatever
    /// ``Configuration/whenInFlightLimitIsReached`` says. Returns at once with synchronous
    /// delivery (no bound).
    ///
    /// ```swift
    /// await aggregator.post("checkout/paid", args: ["amount": 12.5])
    /// ```
    ///
    /// After ``shutdown(deadline:)`` began, the post is refused and counted
    /// (``Diagnostics/postedAfterShutdown``), and a task suspended here resumes. Cancelling the
    /// task does not end the wait: the shutdown does.
    ///
    /// - Parameters:
    ///   - name: the event's name.
    ///   - type: the kind of event; `.default` unless it is a screen view, an error, ...
    ///   - category: a free grouping label.
    ///   - args: the event's arguments.
    ///   - file: the posting site's file, for plans that record posting sites.
    ///   - line: the posting site's line.
    public func post(
        _ name: EventName, type: EventType = .default, category: String? = nil,
        args: [String: any EventValueConvertible] = [:], file: StaticString = #fileID, line: UInt = #line
    ) async {
        guard await inbox.reserveRoomWaiting() else {
            return inbox.refuseAfterShutdown(name, leavingInFlight: false)
        }
        inbox.postHoldingReservedRoom {
            MeasurementEvent.post(name, type: type, category: category, args: args, to: center, file: file, line: line)
        }
    }
}
