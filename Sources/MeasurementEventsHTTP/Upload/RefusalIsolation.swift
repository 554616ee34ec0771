/// How a request the server refused without naming the bad events is taken apart, so that one
/// bad event costs one event and not the whole request.
///
/// Servers such as Segment's and PostHog's refuse a whole batch with 400 when one event in it
/// is invalid. The uploader then sends the two halves of the request instead, and the halves of
/// a refused half, until every refused event is alone in a request of its own: only those are
/// dropped. One refused event among n costs at most 2·⌈log₂ n⌉ extra requests (two per level).
///
/// A server that refuses everything would make that 2n − 1 requests per batch, so each batch has
/// a budget (``splitBudget(forBatchOf:)``); past it, what is left of the batch is dropped and
/// counted as a refused batch. The budget grows with what isolation achieves: each half the
/// server accepts gives back the two requests of its split (``refundPerAcceptedHalf``). What is
/// spent is then only the splits whose halves were both refused, and in the tree of halves those
/// are at most one fewer than the refused events: a batch isolates up to about
/// ``isolatedEventsPerBatch`` · ⌈log₂ n⌉ refused events wherever they sit, and a few refused
/// events never cost a good one. A server that refuses everything accepts no half, so it still
/// costs the initial budget at most.
enum RefusalIsolation {
    /// Refused events per batch that can each be isolated within the initial budget, however
    /// their halves are answered.
    static let isolatedEventsPerBatch = 4

    /// The extra requests a batch of `count` events may spend on splitting: enough to isolate
    /// ``isolatedEventsPerBatch`` refused events, at least one split.
    static func splitBudget(forBatchOf count: Int) -> Int {
        max(2, 2 * ceilingLog2(count) * isolatedEventsPerBatch)
    }

    /// The requests an accepted half gives back to its batch's budget: the two its split cost.
    static let refundPerAcceptedHalf = 2

    /// ⌈log₂ n⌉ for n ≥ 1 (0 for 1 and below).
    static func ceilingLog2(_ value: Int) -> Int {
        var levels = 0
        var covered = 1
        while covered < value {
            covered *= 2
            levels += 1
        }
        return levels
    }

    /// The ranges that replace `span` (the first range still to send, which starts with the
    /// refused `range`): the two halves of `range`, each with half of its `positions` (the
    /// events in it still to send), then the rest of the span.
    static func halves(of range: Range<Int>, positions: [Int], span: Range<Int>) -> [Range<Int>] {
        let middle = positions[positions.count / 2]
        var ranges = [range.lowerBound..<middle, middle..<range.upperBound]
        if range.upperBound < span.upperBound { ranges.append(range.upperBound..<span.upperBound) }
        return ranges
    }
}
