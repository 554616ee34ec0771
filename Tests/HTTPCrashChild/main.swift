// The child process of the crash test: tracks events into an HTTP tracker, printing each
// index once `track` has returned (the event is then "accepted"), until it is killed.
//
// Usage: http-crash-child <queue directory> <collector base URL> <first index> <count>
import Foundation
import MeasurementEvents
import MeasurementEventsHTTP

let arguments = CommandLine.arguments
guard arguments.count == 5, let base = URL(string: arguments[2]), let first = Int(arguments[3]),
      let count = Int(arguments[4])
else {
    FileHandle.standardError.write(Data("usage: http-crash-child <directory> <base URL> <first> <count>\n".utf8))
    exit(64)
}
var configuration = HTTPTracker.Configuration()
configuration.flushAt = 50
configuration.flushInterval = 0.2
configuration.retryPolicy = RetryPolicy(initialDelay: 0.05, maximumDelay: 0.2)
configuration.logHandler = { _ in }
let tracker = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "crash-test", baseURL: base),
    directory: URL(fileURLWithPath: arguments[1]), configuration: configuration)
for index in first..<(first + count) {
    try tracker.track(MeasurementEvent("crash/event", args: ["index": .int(index)]))
    // One write(2) per line: a line in the parent's pipe is complete or absent.
    let line = Array("\(index)\n".utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}
tracker.waitUntilDelivered(timeout: 30)
