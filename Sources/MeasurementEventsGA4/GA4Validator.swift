import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
internal import MeasurementEventsJSON

/// Sends each GA4 request body, as it is sent to `/mp/collect`, also to GA4's validation server
/// (`/debug/mp/collect`), and reports each of its `validationMessages` through the tracker's
/// problem handler with the name of the event it is about. GA4's collect endpoint answers 2xx
/// even to events it drops (Measurement Protocol reference, "Transport"): without this check a
/// dropped event looks delivered.
///
/// The validation server's reply, as GA4 documents it
/// (developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events,
/// "Response"): `{"validationMessages": [{"fieldPath", "description", "validationCode"}]}`,
/// an empty list when the body is valid. It does not process the events: the real request is
/// sent as usual, whatever the validation says.
///
/// Here, not in `MeasurementEventsHTTP`: the HTTP tracker asks the encoder for it
/// (``GA4Encoder/makeRequestValidator(transport:timeout:report:)``), so that an app that sends to
/// another vendor links neither it nor the JSON parser its replies need.
final class GA4Validator: RequestValidator {
    private let transport: any HTTPTransport
    private let timeout: TimeInterval
    private let report: @Sendable (String) -> Void

    init(transport: any HTTPTransport, timeout: TimeInterval, report: @escaping @Sendable (String) -> Void) {
        self.transport = transport
        self.timeout = timeout
        self.report = report
    }

    /// Sends `request`'s body to the validation server; its messages are reported when it answers.
    func check(_ request: HTTPRequest) {
        guard let url = Self.validationURL(for: request.url) else { return }
        var debug = request
        debug.url = url
        transport.send(debug, timeout: timeout) { [report] result in
            for message in Self.messages(in: result, requestBody: request.body) { report(message) }
        }
    }

    /// The collect URL with `/debug` before `/mp/collect`, its query kept.
    static func validationURL(for url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.path.hasSuffix("/mp/collect")
        else { return nil }
        components.path = String(components.path.dropLast("/mp/collect".count)) + "/debug/mp/collect"
        return components.url
    }

    /// The reports for the validation server's answer to a request with `requestBody`: one per
    /// validation message, or one saying why the answer could not be read.
    static func messages(in result: Result<HTTPResponse, any Error>, requestBody: [UInt8]) -> [String] {
        let response: HTTPResponse
        switch result {
        case .failure(let error):
            return ["GA4 validation server not reached (\(error.localizedDescription)); the events were sent as usual"]
        case .success(let value): response = value
        }
        let text = quotedInFull(String(decoding: response.body.prefix(300), as: UTF8.self))
        guard (200..<300).contains(response.status) else {
            return ["GA4 validation server answered HTTP \(response.status): \(text); the events were sent as usual"]
        }
        var parser = JSONParser(bytes: response.body, maximumDepth: 16)
        guard let root = try? parser.parse(), case .object(let members) = root.value,
            let list = members.last(where: { $0.key == "validationMessages" }),
            case .array(let entries) = list.value.value
        else {
            return [
                "GA4 validation server's answer is not the JSON it documents ({\"validationMessages\": [...]}): "
                    + "\(text); nothing was dropped, the events were sent as usual"
            ]
        }
        let names = eventNames(in: requestBody)
        return entries.map { entry in
            let fields = Self.strings(in: entry)
            let path = fields["fieldPath"] ?? ""
            let event = Self.eventIndex(in: path).flatMap { names.indices.contains($0) ? names[$0] : nil }
            return "GA4 validation: \(event.map { "event \($0)" } ?? "the request"): "
                + "\(fields["validationCode"] ?? "no code") at \(quotedInFull(path)): "
                + (fields["description"] ?? "no description")
        }
    }

    /// The string fields of a JSON object (none for anything else).
    private static func strings(in node: JSONNode) -> [String: String] {
        guard case .object(let members) = node.value else { return [:] }
        var fields: [String: String] = [:]
        for member in members {
            if case .string(let text) = member.value.value { fields[member.key] = text }
        }
        return fields
    }

    /// `N` of a field path that starts `events[N]`.
    static func eventIndex(in fieldPath: String) -> Int? {
        guard fieldPath.hasPrefix("events["), let close = fieldPath.firstIndex(of: "]") else { return nil }
        return Int(fieldPath[fieldPath.index(fieldPath.startIndex, offsetBy: 7)..<close])  // checked: nil
    }

    /// The names of the events of a request body, in order.
    private static func eventNames(in body: [UInt8]) -> [String] {
        var parser = JSONParser(bytes: body, maximumDepth: 16)
        guard let root = try? parser.parse(), case .object(let members) = root.value,
            let events = members.last(where: { $0.key == "events" }), case .array(let list) = events.value.value
        else { return [] }
        return list.map { strings(in: $0)["name"] ?? "?" }
    }
}
