import Foundation
import MeasurementEventsGA4
import MeasurementEventsHTTP

/// Reads what an app or a vendor SDK posted to the inspector into ``InspectedEvent``s, and
/// checks vendor requests against each vendor's documented limits (findings shown beside the
/// event; the request is still accepted, as the point is to see it).
package enum VendorRequestReader {
    /// A body the inspector cannot read: answered 400, counted under ``reason``.
    package struct Refusal: Error, Equatable {
        /// The counted reason: `malformed JSON`, `unexpected JSON shape`.
        package var reason: String
        /// What was expected, for the reply.
        package var detail: String
    }

    /// The endpoints and their vendor (`source`).
    package static let vendorPaths: [String: String] = [
        "/v1/batch": "segment", "/2/httpapi": "amplitude", "/batch": "amplitude", "/mp/collect": "ga4",
        "/debug/mp/collect": "ga4", "/v1/logs": "otlp",
    ]

    static func json(_ body: [UInt8]) throws(Refusal) -> [String: Any] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(body), options: []) else {
            throw Refusal(reason: "malformed JSON", detail: "the body is not JSON")
        }
        guard let object = value as? [String: Any] else {
            throw Refusal(reason: "unexpected JSON shape", detail: "expected a JSON object at the top level")
        }
        return object
    }

    static func text(_ value: Any?) -> String? {
        switch value {
        case nil, is NSNull: return nil
        case let string as String: return string
        case let number as NSNumber: return number.stringValue
        case let other?:
            guard JSONSerialization.isValidJSONObject(other),
                let data = try? JSONSerialization.data(
                    withJSONObject: other, options: [.sortedKeys, .withoutEscapingSlashes])
            else { return "\(other)" }
            return String(decoding: data, as: UTF8.self)
        }
    }

    static func texts(_ value: Any?) -> [String: String] {
        guard let object = value as? [String: Any] else { return [:] }
        var result: [String: String] = [:]
        for (key, item) in object { result[key] = text(item) ?? "null" }
        return result
    }

    static func pretty(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value),
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return "\(value)" }
        return String(decoding: data, as: UTF8.self)
    }

    static func size(_ value: Any) -> Int {
        guard JSONSerialization.isValidJSONObject(value) else { return 0 }
        return (try? JSONSerialization.data(withJSONObject: value, options: []))?.count ?? 0
    }

    /// The entries an `InspectorConnection` posted to `/inspector/v1/entries`.
    ///
    /// - Parameter body: `{"entries": [...]}`.
    /// - Returns: one event per entry.
    package static func appEntries(_ body: [UInt8]) throws(Refusal) -> [InspectedEvent] {
        guard let entries = try json(body)["entries"] as? [[String: Any]] else {
            throw Refusal(reason: "unexpected JSON shape", detail: "expected {\"entries\": [objects]}")
        }
        return entries.map { entry in
            let name = text(entry["name"]) ?? "(no name)"
            var event = InspectedEvent(
                source: "app", name: name, module: InspectedEvent.module(of: name),
                status: text(entry["fate"]) ?? "unknown", args: texts(entry["args"]))
            event.id = text(entry["id"])
            event.type = text(entry["type"])
            event.category = text(entry["category"])
            event.label = text(entry["label"])
            event.timestamp = (entry["timestamp"] as? NSNumber)?.doubleValue
            event.reason = text(entry["reason"])
            event.violations = (entry["violations"] as? [[String: Any]] ?? []).map {
                InspectedEvent.Violation(
                    kind: text($0["kind"]) ?? "", message: text($0["message"]) ?? "", file: text($0["file"]),
                    line: ($0["line"] as? NSNumber)?.intValue)
            }
            event.trackers = (entry["trackers"] as? [[String: Any]] ?? []).map {
                InspectedEvent.TrackerResult(
                    tracker: text($0["tracker"]) ?? "", destination: text($0["destination"]),
                    decision: text($0["decision"]), forwarded: ($0["forwarded"] as? Bool) ?? true,
                    error: text($0["error"]), body: text($0["body"]))
            }
            if let purposes = entry["purposes"] as? [String: Any], !purposes.isEmpty {
                event.purposes = purposes.compactMapValues { text($0) }
            }
            return event
        }
    }

    /// The events of a vendor request, each with the findings of the vendor's documented limits.
    ///
    /// - Parameters:
    ///   - path: the endpoint (a key of ``vendorPaths``).
    ///   - body: the decompressed body.
    /// - Returns: the events (one event named `(request)` holding request-level findings when
    ///   the request has no events).
    package static func vendorEvents(path: String, body: [UInt8]) throws(Refusal) -> [InspectedEvent] {
        let object = try json(body)
        let source = vendorPaths[path] ?? "vendor"
        var requestFindings: [String] = []
        var events: [InspectedEvent] = []
        func make(_ name: String, _ args: [String: String], _ raw: Any, _ findings: [String]) -> InspectedEvent {
            var event = InspectedEvent(
                source: source, name: name, module: source, status: "received", args: args, findings: findings)
            event.vendorBody = pretty(raw)
            return event
        }
        switch source {
        case "segment":
            // Segment HTTP Tracking API (segment.com/docs/connections/sources/catalog/libraries/server/http-api/,
            // "Max request size"): 32 KB per call, 500 KB per batch request.
            guard let batch = object["batch"] as? [[String: Any]] else {
                throw Refusal(
                    reason: "unexpected JSON shape", detail: "expected {\"batch\": [calls]} (Segment /v1/batch)")
            }
            if body.count > 500_000 {
                requestFindings.append(
                    "the batch is \(body.count) bytes; Segment takes at most 500 KB per batch request")
            }
            for call in batch {
                var findings: [String] = []
                let bytes = size(call)
                if bytes > SegmentEncoder.maximumEventBytes {
                    findings.append("the call is \(bytes) bytes; Segment refuses calls over 32 KB")
                }
                let type = text(call["type"]) ?? ""
                if type.isEmpty { findings.append("no \"type\" (track, screen, identify, …)") }
                // Every call needs a userId or an anonymousId (same page, "Identities").
                if text(call["userId"]) == nil && text(call["anonymousId"]) == nil && type != "" {
                    findings.append("neither \"userId\" nor \"anonymousId\": Segment requires one")
                }
                if type == "track" && (text(call["event"]) ?? "").isEmpty {
                    findings.append("a track call without \"event\"")
                }
                let name = text(call["event"]) ?? text(call["name"]).map { "\(type): \($0)" } ?? type
                var args = texts(call["properties"])
                for (key, value) in texts(call["traits"]) { args["traits." + key] = value }
                var event = make(name.isEmpty ? "(no name)" : name, args, call, findings + requestFindings)
                event.type = type.isEmpty ? nil : type
                events.append(event)
            }
        case "amplitude":
            // Amplitude HTTP V2 API (amplitude.com/docs/apis/analytics/http-v2): "api_key" and
            // "events" required; requests under 1 MB and fewer than 2,000 events ("Upload limit");
            // each event needs "event_type" and a "user_id" or "device_id", a user_id of at least
            // 5 characters ("Keys for the event argument", min_id_length default 5).
            guard let list = object["events"] as? [[String: Any]] else {
                throw Refusal(
                    reason: "unexpected JSON shape",
                    detail: "expected {\"api_key\", \"events\": [events]} (Amplitude /2/httpapi or /batch)")
            }
            if text(object["api_key"]) == nil { requestFindings.append("no \"api_key\": Amplitude answers 400") }
            // The Batch Event Upload API (amplitude.com/docs/apis/analytics/batch-event-upload,
            // "Limits and considerations"): "The JSON serialized payload must not exceed 20MB".
            let isBatchAPI = path == "/batch"
            if body.count > (isBatchAPI ? 20_000_000 : 1_000_000) {
                requestFindings.append(
                    "the request is \(body.count) bytes; Amplitude takes under \(isBatchAPI ? "20 MB on /batch" : "1 MB")"
                )
            }
            if list.count >= 2_000 {
                requestFindings.append("\(list.count) events; Amplitude takes fewer than 2,000 per request")
            }
            for item in list {
                var findings: [String] = []
                let name = text(item["event_type"]) ?? ""
                if name.isEmpty { findings.append("no \"event_type\"") }
                let user = text(item["user_id"])
                if user == nil && text(item["device_id"]) == nil {
                    findings.append("neither \"user_id\" nor \"device_id\"")
                }
                if let user, user.count < 5 { findings.append("user_id \"\(user)\" is shorter than 5 characters") }
                var args = texts(item["event_properties"])
                for (key, value) in texts(item["user_properties"]) { args["user." + key] = value }
                events.append(make(name.isEmpty ? "(no name)" : name, args, item, findings + requestFindings))
            }
        case "ga4":
            // GA4 Measurement Protocol reference (developers.google.com/analytics/devguides/collection/
            // protocol/ga4/reference, "Request limitations" and "Reserved names"); the limits are
            // GA4Encoder's, which cites the same page.
            guard let list = object["events"] as? [[String: Any]] else {
                throw Refusal(
                    reason: "unexpected JSON shape",
                    detail: "expected {\"client_id\", \"events\": [events]} (GA4 /mp/collect)")
            }
            if text(object["client_id"]) == nil && text(object["app_instance_id"]) == nil {
                requestFindings.append("no \"client_id\" (or \"app_instance_id\")")
            }
            if list.count > 25 { requestFindings.append("\(list.count) events; GA4 takes at most 25 per request") }
            if body.count > 130_000 {
                requestFindings.append("the body is \(body.count) bytes; GA4 takes at most 130 KB")
            }
            for item in list {
                let name = text(item["name"]) ?? ""
                var findings = ga4NameFindings(
                    name, what: "event name", reserved: GA4Encoder.reservedEventNames,
                    prefixes: GA4Encoder.reservedEventPrefixes)
                let params = item["params"] as? [String: Any] ?? [:]
                if params.count > GA4Encoder.maximumParams {
                    findings.append("\(params.count) params; GA4 takes at most \(GA4Encoder.maximumParams)")
                }
                for (key, value) in params.sorted(by: { $0.key < $1.key }) {
                    findings += ga4NameFindings(
                        key, what: "param name", reserved: [], prefixes: GA4Encoder.reservedParamPrefixes)
                    if let string = value as? String, string.count > GA4Encoder.maximumStringValueLength {
                        findings.append(
                            "param \"\(key)\" is \(string.count) characters; GA4 cuts values at \(GA4Encoder.maximumStringValueLength)"
                        )
                    }
                }
                var event = make(name.isEmpty ? "(no name)" : name, texts(params), item, findings + requestFindings)
                event.type = event.args["event_type"]  // GA4Encoder sends the event type as a param
                events.append(event)
            }
        default:
            // OTLP/HTTP JSON (opentelemetry.io/docs/specs/otlp/#otlphttp-request and the logs data
            // model): resourceLogs[].scopeLogs[].logRecords[]; the spec sets no size limits.
            guard let resources = object["resourceLogs"] as? [[String: Any]] else {
                throw Refusal(
                    reason: "unexpected JSON shape", detail: "expected {\"resourceLogs\": [...]} (OTLP /v1/logs)")
            }
            for resource in resources {
                for scope in resource["scopeLogs"] as? [[String: Any]] ?? [] {
                    for record in scope["logRecords"] as? [[String: Any]] ?? [] {
                        var args: [String: String] = [:]
                        for attribute in record["attributes"] as? [[String: Any]] ?? [] {
                            guard let key = text(attribute["key"]) else { continue }
                            // AnyValue: one of stringValue, intValue, boolValue, doubleValue, arrayValue, kvlistValue.
                            let value = (attribute["value"] as? [String: Any])?.first?.value
                            args[key] = text(value) ?? "null"
                        }
                        var findings: [String] = []
                        if text(record["timeUnixNano"]) == nil { findings.append("no \"timeUnixNano\"") }
                        let name = text(record["eventName"]) ?? args["event.name"] ?? ""
                        if name.isEmpty { findings.append("no \"eventName\" nor \"event.name\" attribute") }
                        events.append(make(name.isEmpty ? "(no name)" : name, args, record, findings))
                    }
                }
            }
        }
        if events.isEmpty {
            events.append(make("(request)", [:], object, requestFindings + ["the request carries no event"]))
        }
        return events
    }

    /// GA4's naming rules: letters, digits and underscores, starting with a letter, at most 40
    /// characters, not reserved (GA4Encoder's constants, with their citation).
    static func ga4NameFindings(_ name: String, what: String, reserved: Set<String>, prefixes: [String]) -> [String] {
        var findings: [String] = []
        if name.count > GA4Encoder.maximumNameLength {
            findings.append(
                "\(what) \"\(name)\" is \(name.count) characters; GA4 takes at most \(GA4Encoder.maximumNameLength)")
        }
        let valid =
            name.first.map { $0.isASCII && $0.isLetter } == true
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        if !valid {
            findings.append("\(what) \"\(name)\" must be letters, digits and underscores, starting with a letter")
        }
        if reserved.contains(name) { findings.append("\(what) \"\(name)\" is reserved by GA4") }
        if let prefix = prefixes.first(where: { name.hasPrefix($0) }) {
            findings.append("\(what) \"\(name)\" starts with the reserved prefix \"\(prefix)\"")
        }
        return findings
    }
}
