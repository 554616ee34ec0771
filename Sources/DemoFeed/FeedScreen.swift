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
        MeasurementEvent.post("feed/opened", type: .activity, args: ["source": "launch"], to: center)
        MeasurementEvent.post("feed/debug/layout_pass", type: .activity, args: ["cells": 12], to: center)
        MeasurementEvent.post("feed/item_tapped", type: .click, args: ["item_id": "42", "position": 3], to: center)
        MeasurementEvent.post("feed/item_shared", args: ["item_id": "42", "channel": "messages"], to: center)
    }
}
