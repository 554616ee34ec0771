import Foundation
import MeasurementEvents

/// A stand-in for a settings feature module.
public struct SettingsScreen: Sendable {
    private let center: NotificationCenter

    public init(center: NotificationCenter = .default) {
        self.center = center
    }

    public func simulateVisit() {
        MeasurementEvent.post("settings/opened", type: .activity, to: center)
        MeasurementEvent.post("settings/theme_changed", args: ["theme": "dark"], to: center)
        MeasurementEvent.post("app/permission/photo_library/granted", args: ["prompted": true], to: center)
    }
}
