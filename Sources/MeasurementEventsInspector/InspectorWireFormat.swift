import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// The JSON an ``InspectorConnection`` posts to `POST /inspector/v1/entries`, documented in the
/// Inspecting Events article:
///
/// ```json
/// {"entries": [{"id": "…", "name": "feed/item/open", "type": "click", "category": null,
///   "label": null, "timestamp": 1764190000.25, "args": {"item": "42"},
///   "fate": "forwarded", "reason": null,
///   "violations": [{"kind": "…", "message": "…", "file": "Feed.swift", "line": 12}],
///   "trackers": [{"tracker": "HTTPTracker", "destination": "segment", "decision": "forwarded",
///                 "forwarded": true, "error": null, "body": "POST …"}],
///   "purposes": {"analytics": "granted", "advertising": "denied"}}]}
/// ```
///
/// `fate` is one of `forwarded`, `filtered_out`, `malformed`, `discarded_without_consent`,
/// `discarded_by_processor`, `held`, `dropped`; `reason` says why for the ones that carry it.
/// `purposes` holds the purposes that had a consent of their own when the event reached the
/// destinations (empty when the app set none).
enum InspectorWireFormat {
    static func encode(_ entries: [EventTrailEntry]) -> Data {
        let objects = entries.map(object(for:))
        return (try? JSONSerialization.data(withJSONObject: ["entries": objects], options: [])) ?? Data()
    }

    static func object(for entry: EventTrailEntry) -> [String: Any] {
        let event = entry.event
        var args: [String: Any] = [:]
        for (key, value) in event.args { args[key] = value.description }
        let (fate, reason) = fateFields(entry.fate)
        return [
            "id": event.id.uuidString,
            "name": event.name.rawValue,
            "type": event.type.name,
            "category": event.category ?? NSNull(),
            "label": event.label ?? NSNull(),
            "timestamp": event.timestamp.timeIntervalSince1970,
            "args": args,
            "fate": fate,
            "reason": reason ?? NSNull(),
            "violations": entry.violations.map { violation -> [String: Any] in
                [
                    "kind": "\(violation.kind)",
                    "message": violation.description,
                    "file": violation.file ?? NSNull(),
                    "line": violation.line ?? NSNull(),
                ]
            },
            "trackers": entry.trackers.map { outcome -> [String: Any] in
                [
                    "tracker": outcome.tracker, "destination": outcome.destination,
                    "decision": outcome.decision.description, "forwarded": outcome.decision == .forwarded,
                    "error": outcome.error ?? NSNull(), "body": outcome.body ?? NSNull(),
                ]
            },
            "purposes": Dictionary(
                uniqueKeysWithValues: entry.purposeConsents.map { ($0.key.rawValue, $0.value.rawValue) }),
        ]
    }

    static func fateFields(_ fate: EventTrailEntry.Fate) -> (String, String?) {
        switch fate {
        case .forwarded: return ("forwarded", nil)
        case .filteredOut(let reason): return ("filtered_out", reason)
        case .malformed(let reason): return ("malformed", reason)
        case .discardedWithoutConsent: return ("discarded_without_consent", nil)
        case .discardedByProcessor: return ("discarded_by_processor", nil)
        case .held: return ("held", nil)
        case .dropped(let reason): return ("dropped", reason)
        case .trackerProblem(let problem): return ("tracker_problem", problem)
        }
    }
}
