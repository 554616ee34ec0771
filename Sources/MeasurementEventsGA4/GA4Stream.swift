import Foundation
import MeasurementEvents
import MeasurementEventsHTTP

extension GA4Encoder {
    /// The kind of GA4 data stream the events go to, chosen explicitly: the Measurement Protocol
    /// takes different ids for each.
    ///
    /// developers.google.com/analytics/devguides/collection/protocol/ga4/sending-events, "Key
    /// request components by stream type": a web stream takes `measurement_id` in the URL and
    /// `client_id` in the body; an app (Firebase) stream takes `firebase_app_id` in the URL and
    /// `app_instance_id` in the body, the id the Firebase SDK gives the app
    /// (`Analytics.appInstanceID()`). An app stream is fed by the Firebase SDK; the Measurement
    /// Protocol only adds to it (see the article "Delivering to vendors").
    ///
    /// ```swift
    /// let web = GA4Encoder.Stream.web(measurementID: "G-XXXXXXX")
    /// let app = GA4Encoder.Stream.app(firebaseAppID: "1:1234:ios:abcd", appInstanceID: instanceID)
    /// ```
    public enum Stream: Sendable, Equatable {
        /// A web (or server) stream: `measurement_id` (`G-…`) in the URL, the anonymous id as
        /// `client_id` in the body.
        case web(measurementID: String)
        /// An app stream: `firebase_app_id` in the URL, `app_instance_id` in the body: the 32
        /// hexadecimal digits the Firebase SDK's `Analytics.appInstanceID()` returns.
        case app(firebaseAppID: String, appInstanceID: String)

        /// Whether `id` is 32 hexadecimal digits: the Measurement Protocol reference's
        /// `app_instance_id` ("Uniquely identifies a specific installation of a Firebase app",
        /// the value of the SDK's getAppInstanceId; its validation server answers
        /// `VALUE_INVALID` for another form, developers.google.com/analytics/devguides/collection/
        /// protocol/ga4/validating-events).
        static func isAppInstanceID(_ id: String) -> Bool {
            id.utf8.count == 32
                && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }
        }

        /// The query item naming the stream, as the Measurement Protocol reference names it.
        var queryItem: (String, String) {
            switch self {
            case .web(let measurementID): return ("measurement_id", measurementID)
            case .app(let firebaseAppID, _): return ("firebase_app_id", firebaseAppID)
            }
        }

        /// Why the stream cannot be right, or `nil`.
        var problem: String? {
            switch self {
            case .web(let measurementID):
                return measurementID.isEmpty
                    ? "a GA4 web stream needs its measurement id (G-…, Admin > Data streams > your stream)" : nil
            case .app(let firebaseAppID, let appInstanceID):
                if firebaseAppID.isEmpty {
                    return "a GA4 app stream needs its Firebase app id (Firebase console > Project settings > "
                        + "Your apps > App ID)"
                }
                if appInstanceID.isEmpty {
                    return "a GA4 app stream needs the app instance id the Firebase SDK gives "
                        + "(Analytics.appInstanceID()); without it GA4 cannot tie the events to the app's users. "
                        + "Pass it when it is known, or send to a web stream with .web(measurementID:)"
                }
                if !Self.isAppInstanceID(appInstanceID) {
                    return "a GA4 app stream's app instance id is 32 hexadecimal digits, as "
                        + "Analytics.appInstanceID() returns it (0123456789abcdef0123456789abcdef); found "
                        + "\(quotedInFull(String(appInstanceID.prefix(64))))\(appInstanceID.count > 64 ? "…" : ""), "
                        + "\(appInstanceID.count) characters. GA4's validation server refuses any other value"
                }
                return nil
            }
        }
    }

    /// A GA4 configuration that cannot be right, found when the encoder is made.
    public struct StreamError: Error, Equatable, CustomStringConvertible {
        /// What is wrong and how to fix it.
        public let description: String
    }

    /// Whether the encoder's request bodies are also sent to GA4's validation server
    /// (`/debug/mp/collect`), whose `validationMessages` the tracker reports as problems
    /// (GA4's collect endpoint answers 2xx even to events it drops).
    public enum Validation: Sendable, Equatable {
        /// Never.
        case off
        /// In debug builds of the package (`DEBUG` set): the default.
        case inDebugBuilds
        /// Always, release builds too: each request is sent twice.
        case always

        /// Whether bodies are checked in this build.
        var isOn: Bool {
            switch self {
            case .off: return false
            case .always: return true
            case .inDebugBuilds:
                #if DEBUG
                    return true
                #else
                    return false
                #endif
            }
        }
    }
}
