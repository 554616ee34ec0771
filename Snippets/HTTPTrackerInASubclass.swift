// An HTTP tracker in an aggregator subclass. `HTTPTracker`'s initialiser throws (its folder may
// be impossible to create, or in use by another tracker), and a `static let` cannot hold a
// throwing call: a static function makes the trackers and decides what a failure means.
// Nothing is posted here, so nothing is sent.
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

/// Where this sample keeps its queue: a temporary folder, removed at the end.
enum SampleFolder {
    static let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("HTTPTrackerInASubclass-\(UUID().uuidString)")
}

// snippet.show
final class AppAggregator: EventAggregator, @unchecked Sendable {
    static let shared = AppAggregator(trackers: makeTrackers())

    /// Segment delivery, or the console when its queue cannot be opened: the app keeps running,
    /// and says why nothing is uploaded.
    private static func makeTrackers() -> [any EventTracker] {
        do {
            let segment = try HTTPTracker(
                encoder: SegmentEncoder(writeKey: "YOUR_WRITE_KEY"),
                directory: SampleFolder.url.appendingPathComponent("segment"))  // your Application Support folder
            return [segment]
        } catch {
            FileHandle.standardError.write(Data("analytics: no HTTP delivery this launch: \(error)\n".utf8))
            return [ConsoleTracker()]
        }
    }

    override var allowList: [EventPattern] { ["feed/*"] }
}

AppAggregator.shared.start()
// snippet.end

precondition(AppAggregator.shared.trackers.first is HTTPTracker)
try? FileManager.default.removeItem(at: SampleFolder.url)
