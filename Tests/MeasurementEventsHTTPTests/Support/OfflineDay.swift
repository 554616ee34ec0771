import EncoderTestSupport
import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import XCTest

@testable import MeasurementEventsHTTP

/// Issue 48's day offline: what one device queues in a day without network, and a driver that
/// brings the tracker back online and runs its clock until the queue is empty.
enum OfflineDay {
    /// One queued item: an event or an identify call.
    enum Item {
        case track(MeasurementEvent)
        case identify(IdentityEvent)
    }

    static let deviceID = "device-0001"
    static let userID = "user-00042"
    static let count = 5_000

    /// 5,000 items of one device over the 24 hours before `end`, oldest first: 3 screen views, 2
    /// orders of three products, 1 refund (of one product of the first order), 1 deep link that
    /// names a campaign (every later event carries it, as `StandardEventsProcessor` stamps it),
    /// 2 identify calls, and plain events. Indexes are in each plain event's `index` arg.
    ///
    /// Events come 17 seconds apart, and carry the foreground clock an aggregator stamps: the app
    /// comes to the foreground a second before the first, and before every 50th from index 25 it
    /// spends 9 of the 17 seconds in the background (GA4's `engagement_time_msec` is 8,000 there).
    static func items(endingAt end: Date) -> [Item] {
        let start = end.addingTimeInterval(-86_400 + 60)
        var foreground = ForegroundClock(startingAt: start.addingTimeInterval(-1))
        var identity = EventIdentity(anonymousID: deviceID)
        var campaign: EventArgs = [:]
        var items: [Item] = []
        for index in 0..<count {
            let time = start.addingTimeInterval(Double(index) * 17)
            if index % 50 == 25 {
                foreground.enterBackground(at: time.addingTimeInterval(-12))
                foreground.enterForeground(at: time.addingTimeInterval(-3))
            }
            func event(_ name: EventName, _ args: EventArgs) -> MeasurementEvent {
                var event = MeasurementEvent(name, type: .activity, args: args.merging(campaign) { own, _ in own })
                event.timestamp = time
                event.attributionStorage = AttributionStorage(
                    EventAttribution(
                        identity: identity, sessionID: Int64(start.timeIntervalSince1970 * 1000),
                        context: EncoderSamples.context),
                    foreground: foreground)
                return event
            }
            switch index {
            case 10, 2_500, 4_990:
                items.append(
                    .track(event("screen/viewed", ScreenView("Screen \(index)", screenClass: "Controller").args)))
            case 100:
                let url = "myapp://offer?utm_source=newsletter&utm_medium=email&utm_campaign=spring"
                campaign = ["utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring"]
                items.append(.track(event("app/deep_link_opened", ["url": .string(url)])))
            case 1_000, 3_000:
                items.append(.track(event(Order.eventName, order(index, refund: false).args)))
            case 3_500:
                items.append(.track(event(Order.eventName, order(1_000, refund: true).args)))
            case 200, 4_000:
                identity.userID = userID
                identity.traits = ["plan": .string(index == 200 ? "free" : "pro")]
                let change = IdentityEvent(
                    change: .identify(userID: userID, traits: identity.traits), id: UUID(), timestamp: time,
                    attribution: EventAttribution(
                        identity: identity, sessionID: Int64(start.timeIntervalSince1970 * 1000),
                        context: EncoderSamples.context),
                    previousIdentity: EventIdentity(anonymousID: deviceID))
                items.append(.identify(change))
            default:
                items.append(
                    .track(event("feed/item_shown", ["index": .int(index), "item_id": .string("item-\(index % 97)")])))
            }
        }
        return items
    }

    /// Order T-`index` of three products; its refund is the first product.
    static func order(_ index: Int, refund: Bool) -> Order {
        let products: [Order.Product] = [
            .init(productID: "sku-\(index)-a", name: "Mug", price: Decimal(string: "9.99")!, quantity: 2),
            .init(productID: "sku-\(index)-b", name: "Tea", price: Decimal(string: "4.5")!),
            .init(productID: "sku-\(index)-c", price: Decimal(string: "0.1")!, quantity: 3),
        ]
        return Order(
            currency: "EUR", orderID: "T-\(index)", revenueType: refund ? "refund" : "purchase",
            products: refund ? [products[0]] : products)
    }

    /// What driving the tracker back online took.
    struct Outcome: CustomStringConvertible {
        var diagnostics: HTTPTracker.Diagnostics
        /// Times the clock was moved on to a pending retry or timer, and the seconds it moved.
        var clockAdvances = 0
        var clockSeconds: TimeInterval = 0
        /// Whether the queue emptied before the driver gave up (a stall).
        var stalled = false

        var description: String {
            let d = diagnostics
            return "posted \(count), delivered \(d.delivered), refused by the server \(d.refusedEvents), "
                + "rejected by the encoder \(d.rejectedByEncoder), expired \(d.expiredBeforeSending), "
                + "dropped \(d.rejectedByServer), adapted \(d.adaptedByEncoder), requests \(d.requests), "
                + "retries \(d.retries), clock moved \(clockAdvances) times (\(Int(clockSeconds)) s), "
                + "stalled \(stalled)"
        }
    }

    /// Queues the day while offline, comes back online, flushes, and runs `clock` on whenever the
    /// uploader waits for it, until the queue is empty. Gives up (a stall) after 2,000 moves of
    /// the clock or 120 seconds of real time without the queue emptying.
    static func run(_ items: [Item], through tracker: HTTPTracker, clock: TestClock) throws -> Outcome {
        tracker.networkDidChange(isOnline: false)
        for item in items {
            switch item {
            case .track(let event): try tracker.track(event)
            case .identify(let change): try tracker.identify(change)
            }
        }
        tracker.networkDidChange(isOnline: true)
        try tracker.flush()
        var outcome = Outcome(diagnostics: tracker.diagnostics)
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let activity = tracker.uploader.activity
            if activity.requestInFlight {
                usleep(500)
                continue
            }
            if tracker.diagnostics.queued == 0 && tracker.uploader.isIdle { break }
            if outcome.clockAdvances >= 2_000 { break }
            if let seconds = clock.advanceToNextDeadline() {
                outcome.clockAdvances += 1
                outcome.clockSeconds += seconds
            } else if !activity.waitingToRetry {
                try tracker.flush()
                usleep(500)
            }
        }
        outcome.diagnostics = tracker.diagnostics
        outcome.stalled = outcome.diagnostics.queued != 0 || !tracker.uploader.isIdle
        return outcome
    }
}
