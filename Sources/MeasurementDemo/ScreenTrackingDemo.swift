import EventTriggers
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan

/// Stands in for a `UIViewController` subclass: its lifecycle methods only report to the
/// trigger detector; what gets tracked is attached from outside (see the UIKit recipes in
/// `Sources/EventTriggers/EventTriggers.docc/TriggersAndPlanReference.md`).
final class DemoViewController {
    let screenName: String
    private let detector: TriggerDetector

    init(screenName: String, detector: TriggerDetector) {
        self.screenName = screenName
        self.detector = detector
    }

    func viewDidAppear() { detector.reportDidAppear(self) }
    func viewDidDisappear() { detector.reportDidDisappear(self) }
}

/// Screens report "appeared" through triggers; the plan turns planned screens into screen
/// views, and a time-on-screen recipe posts how long each stayed (with a simulated clock).
func runScreenTrackingDemo(plan: TrackingPlan, center: NotificationCenter) {
    let clock = LockedValue(Date(timeIntervalSince1970: 1_700_000_000))
    let detector = TriggerDetector(now: { clock.withLock { $0 } })
    let screens = ["FeedViewController", "SettingsViewController", "DebugMenuViewController"].map {
        DemoViewController(screenName: $0, detector: detector)
    }
    for screen in screens {
        detector.attachScreenView(screen.screenName, to: screen, plan: plan, center: center)
        detector.attachTimeOnScreen(to: screen, args: ["screen": screen.screenName], center: center)
    }
    detector.attachOnce(.didAppear, to: screens[0], trace: "first feed visit") { _ in
        print("(trigger, once) first visit to the feed: the app would show its tip here")
    }

    for (seconds, screen) in zip([12.5, 3.0, 1.0, 4.0], screens + [screens[0]]) {
        screen.viewDidAppear()
        clock.withLock { $0 += seconds }
        screen.viewDidDisappear()
    }
    detector.flush()
}
