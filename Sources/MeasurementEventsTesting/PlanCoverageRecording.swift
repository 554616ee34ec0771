import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Plan coverage: which events the test run posted, written to a file that
/// `measurement-events coverage <file>` compares with the catalogs
/// ("37 of 42 planned events posted by tests; never posted: …").
///
/// Every event that reaches a ``RecordingTracker`` or an ``EventRecorder`` is recorded. Set the
/// environment variable `MEASUREMENT_EVENTS_COVERAGE_FILE` to a path when running the tests:
///
/// ```
/// MEASUREMENT_EVENTS_COVERAGE_FILE=$PWD/.build/plan-coverage.txt swift test
/// swift run measurement-events coverage .build/plan-coverage.txt --minimum 80
/// ```
///
/// The file gets one event name a line, each name once per test process, appended (so that
/// parallel test processes can share it); delete it before a run.
public enum PlanCoverageRecording {
    /// The environment variable that names the coverage file.
    public static let environmentVariable = "MEASUREMENT_EVENTS_COVERAGE_FILE"

    private static let seen = LockedValue<Set<EventName>>([])
    private static let file: String? = ProcessInfo.processInfo.environment[environmentVariable].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// Records that `name` was posted, when a coverage file is set; each name once.
    ///
    /// - Parameter name: a posted event's name.
    public static func record(_ name: EventName) {
        guard let file else { return }
        // Appended under the lock so that two threads' lines never interleave.
        seen.withLock { seen in
            guard seen.insert(name).inserted else { return }
            append(name.rawValue + "\n", to: file)
        }
    }

    private static func append(_ text: String, to path: String) {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { handle.closeFile() }
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
    }
}
