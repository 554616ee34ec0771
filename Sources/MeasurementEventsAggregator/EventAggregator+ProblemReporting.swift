import Foundation
import MeasurementEvents

extension EventAggregator.Problem {
    /// Writes the problem to standard error as one line, `[MeasurementEvents] <description>`:
    /// the default ``EventAggregator/Configuration-swift.struct/problemHandler`` of debug builds.
    public static let writeToStandardError: @Sendable (EventAggregator.Problem) -> Void = { problem in
        FileHandle.standardError.write(Data("[MeasurementEvents] \(problem.description)\n".utf8))
    }

    /// ``writeToStandardError`` in debug builds, `nil` in release builds.
    static var debugBuildDefault: (@Sendable (EventAggregator.Problem) -> Void)? {
        #if DEBUG
            return writeToStandardError
        #else
            return nil
        #endif
    }
}

extension EventAggregator {
    /// Reports, once, that events were posted on ``center`` while this aggregator was never
    /// started. Outside every lock: the handler is user code.
    func reportIfNeverStarted() {
        if let problem = startCheck.problem() { configuration.problemHandler?(problem) }
    }
}
