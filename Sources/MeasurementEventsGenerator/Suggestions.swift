import MeasurementEvents
import MeasurementEventsAggregator

/// The candidate closest to `text` when it is a plausible typo or abbreviation, for
/// "did you mean …?" hints.
///
/// ```swift
/// closestMatch(to: "genrate", among: ["generate", "check", "plan"])   // "generate"
/// closestMatch(to: "gen", among: ["generate", "check", "plan"])       // "generate" (a prefix)
/// ```
///
/// - Parameters:
///   - text: what the user wrote.
///   - candidates: the valid spellings, in order of preference.
/// - Returns: the first candidate `text` is a prefix of, else the nearest one within a third of its
///   length (at least 2 edits), else `nil`.
func closestMatch(to text: String, among candidates: [String]) -> String? {
    let lowered = text.lowercased()
    guard !lowered.isEmpty else { return nil }
    if let prefixed = candidates.first(where: { $0.lowercased().hasPrefix(lowered) }) { return prefixed }
    let scored = candidates.map { (candidate: $0, distance: editDistance(lowered, $0.lowercased())) }
    guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
    return best.distance <= max(2, best.candidate.count / 3) ? best.candidate : nil
}

/// ` (did you mean "category"?)`, or nothing when no candidate is close.
func didYouMean(_ text: String, _ candidates: [String]) -> String {
    closestMatch(to: text, among: candidates).map { " (did you mean \(quoted($0))?)" } ?? ""
}

/// Levenshtein distance over characters.
func editDistance(_ lhs: String, _ rhs: String) -> Int {
    let a = Array(lhs)
    let b = Array(rhs)
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    var current = previous
    for i in 1...a.count {
        current[0] = i
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
