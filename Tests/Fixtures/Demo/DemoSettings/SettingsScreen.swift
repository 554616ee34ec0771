import Foundation
import MeasurementEvents

/// A stand-in for a settings feature module.
public struct SettingsScreen: Sendable {
    private let center: NotificationCenter

    public init(center: NotificationCenter = .default) {
        self.center = center
    }

    public func simulateVisit() {
        DemoSettingsEvents.postSettingsOpened(to: center)
        DemoSettingsEvents.postSettingsThemeChanged(theme: "dark", to: center)
        DemoSettingsEvents.postAppPermissionPhotoLibraryGranted(prompted: true, to: center)
    }
}
