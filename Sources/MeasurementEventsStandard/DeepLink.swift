import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// An opened URL (deep link or universal link) and the campaign its UTM parameters name.
///
/// ```swift
/// // In scene(_:openURLContexts:) or .onOpenURL:
/// DeepLink(url).post()   // app/deep_link_opened url=… utm_source=newsletter …
/// ```
///
/// ``StandardEventsProcessor`` keeps the campaign (`utm_source`, `utm_medium`,
/// `utm_campaign`, `utm_term`, `utm_content`) for the rest of the session. A URL over
/// ``maximumURLBytes``, one with control characters, one that does not parse, or a UTM
/// value over ``maximumParameterLength`` characters is reported and not stored.
public struct DeepLink: Sendable, Equatable {
    /// The longest URL kept, in UTF-8 bytes.
    public static let maximumURLBytes = 8 * 1024
    /// The longest UTM value kept, in characters.
    public static let maximumParameterLength = 256
    /// The UTM query parameters, as args.
    public static let utmArgs = StandardEventNames.campaignArgs

    /// The URL as opened.
    public var url: String

    /// A deep link.
    ///
    /// - Parameter url: the URL the app was opened with.
    public init(_ url: URL) { self.url = url.absoluteString }

    /// A deep link from text, as received (checked when posted).
    ///
    /// - Parameter url: the URL's text.
    public init(text url: String) { self.url = url }

    /// The event's args: `url` and each UTM query parameter present (first occurrence).
    public var args: EventArgs {
        var args: EventArgs = ["url": .string(url)]
        guard url.utf8.count <= Self.maximumURLBytes,
            let items = URLComponents(string: url)?.queryItems
        else { return args }
        for name in Self.utmArgs {
            if let value = items.first(where: { $0.name == name })?.value { args[name] = .string(value) }
        }
        return args
    }

    /// Posts `app/deep_link_opened`.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public func post(to center: NotificationCenter = .default) {
        MeasurementEvent.post(
            MeasurementEventsStandardEvents.AppDeepLinkOpened.eventName,
            type: MeasurementEventsStandardEvents.AppDeepLinkOpened.eventType, args: args, to: center)
    }

    /// What is wrong with an `app/deep_link_opened` event, or `nil`.
    static func check(_ event: MeasurementEvent) -> StandardEventProblem? {
        func problem(_ arg: String, _ found: String, _ expected: String) -> StandardEventProblem {
            StandardEventProblem(
                event: event.name, arg: arg, found: found, expected: expected + "; the link was not stored")
        }
        guard let url = event.args["url"]?.stringValue else {
            return problem("url", event.args["url"].map { "\($0)" } ?? "nothing", "the URL as a string")
        }
        let bytes = url.utf8.count
        guard bytes <= maximumURLBytes else {
            return problem("url", "\(bytes) bytes", "a URL of at most \(maximumURLBytes) bytes")
        }
        if let control = url.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            return problem(
                "url", "the control character U+\(String(control.value, radix: 16, uppercase: true))",
                "a URL without control characters")
        }
        guard let components = URLComponents(string: url), components.scheme != nil else {
            return problem(
                "url", quotedInFull(url), "a URL with a scheme, such as myapp://feed or https://example.com/feed")
        }
        for name in utmArgs {
            guard let value = event.args[name] else { continue }
            guard let text = value.stringValue, text.count <= maximumParameterLength,
                !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                let found = value.stringValue.map { "\($0.count) characters" } ?? "\(value)"
                return problem(
                    name, found, "text of at most \(maximumParameterLength) characters without control characters")
            }
        }
        return nil
    }
}
