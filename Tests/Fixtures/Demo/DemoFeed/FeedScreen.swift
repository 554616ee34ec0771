import Foundation
import MeasurementEvents

/// A stand-in for a feed feature module: it knows nothing of vendors or aggregators and only
/// posts measurement events.
public struct FeedScreen: Sendable {
    private let center: NotificationCenter

    public init(center: NotificationCenter = .default) {
        self.center = center
    }

    /// What a short visit to the feed posts.
    public func simulateVisit() {
        DemoFeedEvents.postFeedOpened(source: "launch", to: center)
        DemoFeedEvents.postFeedDebugLayoutPass(cells: 12, to: center)
        DemoFeedEvents.postFeedItemTapped(itemID: "42", position: 3, to: center)
        DemoFeedEvents.postFeedItemShared(itemID: "42", channel: "messages", to: center)
    }
}
