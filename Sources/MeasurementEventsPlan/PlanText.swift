import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Text helpers shared by the plan and catalog loaders: JSON paths and "did you mean".
enum PlanText {
    /// `$.screens` for identifier-like keys, `$.events["feed/item_tapped"]` for others.
    static func path(_ parent: String, key: String) -> String {
        let isIdentifier =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
            } && !("0"..."9").contains(key.unicodeScalars.first!)
        if isIdentifier { return "\(parent).\(key)" }
        return "\(parent)[\(quotedInFull(key))]"
    }

    static func path(_ parent: String, index: Int) -> String { "\(parent)[\(index)]" }

    /// `"a", "b", "c"`.
    static func quotedList(_ items: some Sequence<String>) -> String {
        items.map(quotedInFull).joined(separator: ", ")
    }

    /// `; did you mean "x"?` for the closest candidate within a few edits, or nothing.
    static func suggestion(for text: String, among candidates: some Sequence<String>) -> String {
        // Two edits catch a swap ("lable") or a dropped pair ("scren"); never most of the word.
        let limit = min(max(2, text.count / 3), 3, text.count - 1)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(text, candidate)
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best.map { "; did you mean \(quotedInFull($0.candidate))?" } ?? ""
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
