import Foundation
import MeasurementEvents

/// A feature module of the consumer app, posting through its generated helpers.
public struct CheckoutScreen: Sendable {
    private let center: NotificationCenter

    public init(center: NotificationCenter = .default) {
        self.center = center
    }

    public func pay(cartID: String, email: String) {
        CheckoutEvents.postCheckoutStarted(cartID: cartID, items: 2, total: 19.9, to: center)
        CheckoutEvents.postCheckoutPaid(cartID: cartID, email: email, express: true, to: center)
    }
}
