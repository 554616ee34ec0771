import Foundation

extension LoopbackCollector {
    /// Plays GA4's Measurement Protocol validation server for requests to `/debug/mp/collect`:
    /// answers 200 with `{"validationMessages": [...]}` (an empty list for a valid body), as
    /// developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events
    /// documents the reply (`fieldPath`, `description`, `validationCode`). It checks what GA4
    /// documents for the body (reference and "Limitations" of sending-events): a client or app
    /// instance id (32 hexadecimal digits), 1 to 25 events (the request schema's `minItems` 1),
    /// event names (letters, digits and `_`, starting with a letter, at most 40 characters, not
    /// reserved), at most 25 params per event, param names and string values of at most 100
    /// characters. Other requests get `otherwise`'s reply, else
    /// the script's. Replaces any ``respond(with:)``.
    ///
    /// - Parameters:
    ///   - answersWithoutJSON: answer every validation request with a body that is not JSON
    ///     (for tests of bad input).
    ///   - otherwise: the reply to any other request; `nil` leaves it to the script.
    public func playGA4ValidationServer(
        answersWithoutJSON: Bool = false, otherwise: (@Sendable (Request) -> Reply?)? = nil
    ) {
        respond { request in
            guard request.target.contains("/debug/mp/collect")
            else { return otherwise?(request) }
            if answersWithoutJSON {
                return Reply(
                    status: 200, headers: ["Content-Type": "text/html"], body: "<html>Service Unavailable</html>")
            }
            let messages = GA4ValidationRules.messages(for: request.body)
            let data = try? JSONSerialization.data(
                withJSONObject: ["validationMessages": messages], options: [.sortedKeys])
            return Reply(
                status: 200, headers: ["Content-Type": "application/json"],
                body: String(decoding: data ?? Data("{}".utf8), as: UTF8.self))
        }
    }
}

/// The checks the played validation server makes.
public enum GA4ValidationRules {
    static let reservedEventNames: Set<String> = [
        "ad_activeview", "ad_click", "ad_exposure", "ad_impression", "ad_query", "ad_reward", "adunit_exposure",
        "app_background", "app_clear_data", "app_exception", "app_install", "app_remove", "app_store_refund",
        "app_update", "app_upgrade", "error", "first_open", "first_visit", "in_app_purchase", "os_update",
        "screen_view", "session_start", "user_engagement",
    ]
    static let reservedPrefixes = ["_", "firebase_", "ga_", "google_", "gtag."]

    /// The validation messages for a request body, as GA4's validation server lists them.
    public static func messages(for body: [UInt8]) -> [[String: String]] {
        guard let root = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return [message("", "Unable to parse the request body as JSON.", "VALUE_INVALID")]
        }
        var messages: [[String: String]] = []
        if root["client_id"] == nil && root["app_instance_id"] == nil {
            messages.append(message("client_id", "client_id or app_instance_id is required.", "VALUE_REQUIRED"))
        }
        if let id = root["app_instance_id"] as? String,
            id.utf8.count != 32
                || !id.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) })
        {
            messages.append(
                message(
                    "app_instance_id", "Measurement app_instance_id is expected to be a 32 digit hexadecimal number.",
                    "VALUE_INVALID"))
        }
        if let consent = root["consent"] {
            // The request schema's consent: an object of ad_user_data and ad_personalization,
            // each "GRANTED" or "DENIED" (Measurement Protocol reference, "consent").
            let fields = consent as? [String: Any] ?? ["": "not an object"]
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                guard ["ad_user_data", "ad_personalization"].contains(key) else {
                    messages.append(message("consent.\(key)", "Unknown consent field [\(key)].", "VALUE_INVALID"))
                    continue
                }
                if value as? String != "GRANTED" && value as? String != "DENIED" {
                    messages.append(
                        message("consent.\(key)", "Consent values are GRANTED or DENIED.", "VALUE_INVALID"))
                }
            }
        }
        let events = root["events"] as? [[String: Any]] ?? []
        if events.isEmpty {
            // The request schema's events: "minItems": 1.
            messages.append(message("events", "The request must hold at least one event.", "VALUE_REQUIRED"))
        }
        if events.count > 25 {
            messages.append(message("events", "A request may contain at most 25 events.", "EXCEEDED_MAX_ENTITIES"))
        }
        for (index, event) in events.enumerated() {
            let path = "events[\(index)]"
            guard let name = event["name"] as? String, !name.isEmpty else {
                messages.append(message("\(path).name", "Event at index: [\(index)] has no name.", "VALUE_REQUIRED"))
                continue
            }
            if reservedEventNames.contains(name) || reservedPrefixes.contains(where: name.hasPrefix) {
                messages.append(
                    message(
                        "\(path).name", "Event at index: [\(index)] has name [\(name)] which is reserved.",
                        "NAME_RESERVED"))
            } else if !isValidName(name) {
                messages.append(
                    message(
                        "\(path).name",
                        "Event at index: [\(index)] has invalid name [\(name)]. Only alphanumeric characters and "
                            + "underscores are allowed, starting with a letter, at most 40 characters.",
                        "NAME_INVALID"))
            }
            let params = event["params"] as? [String: Any] ?? [:]
            if params.count > 25 {
                messages.append(
                    message(
                        "\(path).params", "Event at index: [\(index)] has more than 25 params.",
                        "EXCEEDED_MAX_ENTITIES"))
            }
            for key in params.keys.sorted() {
                if reservedPrefixes.contains(where: key.hasPrefix) || !isValidName(key) {
                    messages.append(
                        message(
                            "\(path).params.\(key)",
                            "Event at index: [\(index)] has invalid param [\(key)].", "NAME_INVALID"))
                } else if let text = params[key] as? String, text.count > 100 {
                    messages.append(
                        message(
                            "\(path).params.\(key)",
                            "Event at index: [\(index)] has param [\(key)] with a value longer than 100 characters.",
                            "VALUE_INVALID"))
                }
            }
        }
        return messages
    }

    private static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic, name.count <= 40
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
        }
    }

    private static func message(_ fieldPath: String, _ description: String, _ code: String) -> [String: String] {
        ["fieldPath": fieldPath, "description": description, "validationCode": code]
    }
}
