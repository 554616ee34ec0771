import Foundation
import LoopbackCollector

/// The calls of every Segment batch the collector received, in order (a request whose body is
/// not a batch is skipped).
func segmentCalls(receivedBy collector: LoopbackCollector) -> [[String: Any]] {
    collector.requests.flatMap { request -> [[String: Any]] in
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let calls = body["batch"] as? [[String: Any]]
        else { return [] }
        return calls
    }
}

/// One line of sorted JSON.
func compactJSON(_ value: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else {
        return "\(value)"
    }
    return String(decoding: data, as: UTF8.self)
}
