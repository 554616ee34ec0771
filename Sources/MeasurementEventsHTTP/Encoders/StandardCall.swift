import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandardValues

/// The standard events a vendor has its own call for, read from a queued event. An event
/// whose args do not check out (an order with a bad amount) is `nil` here and goes as a
/// plain event: the encoder never writes a number it could not verify.
package enum StandardCall {
    case screen(ScreenView)
    case order(Order)
    case alias(previousID: String, userID: String)

    /// Borrowed: every event of every request is asked, and a copy of each retained and released
    /// every string and dictionary in it (issue 49).
    package init?(_ queued: borrowing QueuedEvent) {
        guard queued.kind == .track else { return nil }
        switch queued.event.name {
        case ScreenView.eventName:
            guard let view = ScreenView((copy queued).event), !view.name.isEmpty else { return nil }
            self = .screen(view)
        case Order.eventName:
            guard let order = try? Order(validating: (copy queued).event) else { return nil }
            self = .order(order)
        case StandardEventNames.userAliased:
            guard let previousID = queued.event.args["previous_id"]?.stringValue,
                let userID = queued.event.args["user_id"]?.stringValue
            else { return nil }
            self = .alias(previousID: previousID, userID: userID)
        default:
            return nil
        }
    }

    /// The session's campaign an event carries: its `utm_*` args (``StandardEventsProcessor``
    /// stamps them on every event of the session after a deep link named one).
    package static func campaign(of event: MeasurementEvent) -> EventArgs {
        event.args.filter { StandardEventNames.campaignArgs.contains($0.key) }
    }

    /// `args` without the campaign, for vendors that take the campaign as context.
    package static func withoutCampaign(_ args: EventArgs) -> EventArgs {
        args.filter { !StandardEventNames.campaignArgs.contains($0.key) }
    }
}

extension JSONWriter {
    /// Writes an amount as the JSON number its decimal text spells (no binary floating point
    /// on the way): `19.99` stays `19.99`.
    package mutating func decimal(_ value: Decimal) {
        let text = DecimalText.text(value)
        if DecimalText.value(text) != nil { raw(Array(text.utf8)) } else { null() }
    }
}
