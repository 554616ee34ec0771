import Foundation

/// One event as the inspector shows it and its JSON API returns it (`GET /api/events`).
///
/// The JSON shape (documented in the Inspecting Events article):
/// `{"seq", "receivedAt", "source", "id", "name", "module", "type", "category", "label",
/// "timestamp", "args", "status", "reason", "violations", "trackers", "findings", "vendorBody",
/// "catalog", "purposes"}`. `source` is `app` for an ``InspectorConnection`` entry, otherwise the vendor
/// endpoint that received it (`segment`, `amplitude`, `ga4`, `otlp`).
package struct InspectedEvent: Codable, Sendable, Hashable {
    /// A plan violation, as the app reported it.
    package struct Violation: Codable, Sendable, Hashable {
        package var kind: String
        package var message: String
        package var file: String?
        package var line: Int?
    }

    /// What one tracker did.
    package struct TrackerResult: Codable, Sendable, Hashable {
        package var tracker: String
        /// The destination's name (the tracker's type name for a plain one).
        package var destination: String?
        /// What the destination decided, in words: `forwarded`, `filtered by the destination: …`.
        package var decision: String?
        /// Whether the destination handed the event to its tracker.
        package var forwarded: Bool = true
        package var error: String?
        package var body: String?
    }

    /// What the catalogs say about the event's name (with `--package-path`).
    package struct CatalogInfo: Codable, Sendable, Hashable {
        package var module: String
        package var description: String
        package var rules: [String]
    }

    /// The inspector's running number: the `since` cursor of `GET /api/events`.
    package var seq = 0
    /// When the inspector received it, seconds since 1970.
    package var receivedAt: Double = 0
    package var source: String
    package var id: String?
    package var name: String
    /// The name's first component (`feed` of `feed/item/open`), or the vendor for vendor requests.
    package var module: String
    package var type: String?
    package var category: String?
    package var label: String?
    /// When the app posted it, seconds since 1970.
    package var timestamp: Double?
    package var args: [String: String]
    /// `forwarded`, `filtered_out`, `malformed`, `discarded_without_consent`,
    /// `discarded_by_processor`, `held`, `dropped`, or `received` (a vendor request).
    package var status: String
    package var reason: String?
    package var violations: [Violation]
    package var trackers: [TrackerResult]
    /// What the vendor's documented limits say about it (vendor endpoints).
    package var findings: [String]
    /// The request body the event came in (vendor endpoints), pretty-printed when it is JSON.
    package var vendorBody: String?
    package var catalog: CatalogInfo?
    /// The purposes that had a consent of their own when the event reached the destinations:
    /// `{"advertising": "denied"}`; `nil` when the app set none (or for vendor requests).
    package var purposes: [String: String]?

    package init(
        source: String, name: String, module: String, status: String, args: [String: String] = [:],
        findings: [String] = []
    ) {
        self.source = source
        self.name = name
        self.module = module
        self.status = status
        self.args = args
        self.violations = []
        self.trackers = []
        self.findings = findings
    }

    /// The module of an event name: its first component.
    package static func module(of name: String) -> String {
        name.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
    }
}
