import Foundation
import MeasurementEvents

/// Where an aggregator delivers: a tracker, with what only this tracker's events go through.
///
/// Every event that passed the aggregator's pipeline reaches each destination, which may keep
/// it from its tracker or change its own copy first, in this order:
///
/// 1. the catalogs' routing: an event whose catalog entry names its `"destinations"` reaches
///    only the destinations of those ``name``s;
/// 2. ``filter``: the destination's own allow- and deny-list (the `EventFilter` syntax);
/// 3. ``sampleRate``: the share of events kept, decided by the event's id, so that one event is
///    kept or not the same way every time;
/// 4. ``processors``: in order, on this destination's copy of the event only (rename it, drop or
///    rename args, enrich it); one that returns `nil` keeps the event from this tracker.
///
/// Then the tracker's `track(_:)`. The trail (``EventTrailEntry/trackers``) shows each
/// destination's decision for each event. Consent, readiness, flushes and identity changes reach
/// every tracker through its destination, whatever its options.
///
/// A plain tracker is a destination with none of these: `EventAggregator(trackers:)` and
/// ``EventAggregator/addTracker(_:)`` make one.
///
/// ```swift
/// let aggregator = EventAggregator(
///     filter: .allowAll,
///     destinations: [
///         Destination(amplitude, name: "amplitude", filter: EventFilter(allow: ["checkout/*"])),
///         Destination(ga4, name: "ga4", processors: [DroppingArgs(["coupon"])]),
///         Destination(otlp, name: "otlp", sampleRate: 0.1),
///         Destination(ConsoleTracker(), name: "debug"),
///     ])
/// ```
///
/// Rules: a processor may rename the event (its copy only); the catalogs' routing and the filter
/// look at the name as posted. One tracker object belongs to one destination: a second destination
/// on the same class instance is reported (``EventAggregator/Problem/duplicateDestination(_:)``)
/// and left out, so that no tracker receives an event twice.
public struct Destination: Sendable {
    /// Where the events go.
    public let tracker: any EventTracker
    /// The name the catalogs' `"destinations"` and the trail use: `amplitude`, `ga4`, `debug`.
    /// The tracker's type name unless given.
    public var name: String
    /// The events this destination keeps; `nil` keeps every event.
    public var filter: EventFilter?
    /// Processors applied, in order, to this destination's copy of each event.
    public var processors: [any EventProcessor]
    /// The share of events kept, from 0 (none) to 1 (all, the default); decided by the event's id.
    public var sampleRate: Double
    /// The purposes of consent this destination needs: it receives an event only when every one
    /// of them was granted when the event was posted (``EventAggregator/setConsent(_:for:)``;
    /// a purpose without a consent of its own follows ``EventAggregator/consent``). By default
    /// its tracker's ``EventTracker/defaultPurposes`` (analytics for the Amplitude, GA4 and OTLP
    /// encoders, none for Segment, whose own consent management routes by the categories every
    /// event carries); none for a tracker that names none: it follows the aggregator's consent.
    public var purposes: Set<ConsentPurpose>

    /// A destination for `tracker`.
    ///
    /// - Parameters:
    ///   - tracker: where the events go.
    ///   - name: the name the catalogs and the trail use; the tracker's type name when `nil`.
    ///   - filter: the events it keeps; every event when `nil`.
    ///   - processors: applied in order to its copy of each event.
    ///   - sampleRate: the share of events kept, 0 to 1.
    ///   - purposes: the purposes of consent it needs; the tracker's ``EventTracker/defaultPurposes``
    ///     when `nil`.
    public init(
        _ tracker: any EventTracker, name: String? = nil, filter: EventFilter? = nil,
        processors: [any EventProcessor] = [], sampleRate: Double = 1, purposes: Set<ConsentPurpose>? = nil
    ) {
        self.tracker = tracker
        self.name = name ?? String(describing: type(of: tracker))
        self.filter = filter
        self.processors = processors
        self.sampleRate = sampleRate
        self.purposes = purposes ?? tracker.defaultPurposes
    }

    /// The consent this destination is under: the strictest of the aggregator's (`global`) and
    /// those of the purposes it needs (a purpose without a consent of its own follows `global`):
    /// denied, then pending-discarding, then pending-holding, then granted.
    func consent(
        purposes consents: [ConsentPurpose: MeasurementEventsAggregator.Consent],
        global: MeasurementEventsAggregator.Consent
    ) -> MeasurementEventsAggregator.Consent {
        deciding(purposes: consents, global: global).consent
    }

    /// The consent this destination is under (``consent(purposes:global:)``) and the purpose it
    /// comes from: of two purposes under the same consent, the first by name; `nil` when the
    /// aggregator's consent decides (no purpose it needs has a consent of its own as strict).
    func deciding(
        purposes consents: [ConsentPurpose: MeasurementEventsAggregator.Consent],
        global: MeasurementEventsAggregator.Consent
    ) -> (consent: MeasurementEventsAggregator.Consent, purpose: ConsentPurpose?) {
        var result = global
        var deciding: ConsentPurpose?
        for purpose in purposes {
            guard let consent = consents[purpose] else { continue }  // follows `global`
            // `code` orders consents from granted (0) to denied (3).
            if consent.code > result.code
                || (consent.code == result.code && deciding.map { purpose.rawValue < $0.rawValue } ?? true)
            {
                result = consent
                deciding = purpose
            }
        }
        return (result, deciding)
    }

    /// The purposes' consents an event reaching this destination carries
    /// (`EventAttribution.purposeConsents`): each purpose with a consent of its own, and each
    /// this destination needs (under `global` when it has none), `true` when granted.
    func purposeConsents(
        _ consents: [ConsentPurpose: MeasurementEventsAggregator.Consent], global: MeasurementEventsAggregator.Consent
    ) -> [String: Bool] {
        var stamped: [String: Bool] = [:]
        for (purpose, consent) in consents { stamped[purpose.rawValue] = consent == .granted }
        for purpose in purposes where consents[purpose] == nil { stamped[purpose.rawValue] = global == .granted }
        return stamped
    }

    /// Whether events reach the tracker as they are: no filter, processors or sampling. (Its
    /// purposes matter only once the app gives a purpose a consent of its own.)
    var isPlain: Bool { filter == nil && processors.isEmpty && sampleRate >= 1 }

    /// What the destination decides for `event`: its copy to track, or why not.
    ///
    /// - Parameter routes: the catalogs' routing of the event's name, when a catalog names its
    ///   destinations.
    func decide(_ event: MeasurementEvent, routes: Set<String>?) -> (MeasurementEvent?, EventTrailEntry.Decision) {
        if let routes, !routes.contains(name) {
            return (nil, .notRouted)
        }
        if let filter, let reason = filter.reasonForDropping(event.name.rawValue) {
            return (nil, .filtered(reason))
        }
        if sampleRate < 1, !Self.keeps(event.id, rate: sampleRate) {
            return (nil, .sampledOut(rate: sampleRate))
        }
        var copy = event
        for processor in processors {
            guard let processed = processor.process(copy) else {
                return (nil, .droppedByProcessor(String(describing: type(of: processor))))
            }
            copy = processed
        }
        return (copy, .forwarded)
    }

    /// Whether the event of `id` is in the kept share `rate`: its 16 bytes mixed into a number
    /// in [0, 1) (splitmix64's finaliser), so that ids made in sequence spread evenly too.
    static func keeps(_ id: UUID, rate: Double) -> Bool {
        guard rate > 0 else { return false }
        let b = id.uuid
        let high =
            UInt64(b.0) << 56 | UInt64(b.1) << 48 | UInt64(b.2) << 40 | UInt64(b.3) << 32 | UInt64(b.4) << 24
            | UInt64(b.5) << 16 | UInt64(b.6) << 8 | UInt64(b.7)
        let low =
            UInt64(b.8) << 56 | UInt64(b.9) << 48 | UInt64(b.10) << 40 | UInt64(b.11) << 32 | UInt64(b.12) << 24
            | UInt64(b.13) << 16 | UInt64(b.14) << 8 | UInt64(b.15)
        var mixed = high ^ (low &* 0x9E37_79B9_7F4A_7C15)
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Double(mixed >> 11) / Double(UInt64(1) << 53) < rate
    }
}

/// A purpose the user consents to, as the law and consent platforms name them: a destination
/// needs some (``Destination/purposes``).
public struct ConsentPurpose: Hashable, Sendable, RawRepresentable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The purpose's name: `analytics`, `advertising`, or one the app names.
    public let rawValue: String

    /// A purpose named `rawValue`.
    ///
    /// - Parameter rawValue: the purpose's name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A purpose named `value`.
    ///
    /// - Parameter value: the purpose's name.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Product analytics: what the app's usage is.
    public static let analytics: ConsentPurpose = "analytics"
    /// Advertising: measuring and targeting ads.
    public static let advertising: ConsentPurpose = "advertising"
    /// Personalization: tailoring content or ads to the user.
    public static let personalization: ConsentPurpose = "personalization"
    /// What the app needs to work (crash and error reports, fraud prevention).
    public static let functional: ConsentPurpose = "functional"

    /// The purpose's name.
    public var description: String { rawValue }
}

/// The destinations in force, as the admission step hands them to the trackers' step: the list,
/// their trackers in the same order, and whether every one is plain (then each event goes to
/// each tracker as it is, with no decision to make).
struct Destinations: Sendable {
    let all: [Destination]
    let trackers: [any EventTracker]
    let arePlain: Bool

    init(_ all: [Destination] = []) {
        self.all = all
        trackers = all.map(\.tracker)
        arePlain = all.allSatisfy(\.isPlain)
    }

    /// `destination` added after the others, unless its tracker is a class instance that another
    /// destination already has: then nil (the caller reports it).
    func adding(_ destination: Destination) -> Destinations? {
        if type(of: destination.tracker) is AnyClass {
            let object = destination.tracker as AnyObject
            if all.contains(where: { type(of: $0.tracker) is AnyClass && ($0.tracker as AnyObject) === object }) {
                return nil
            }
        }
        return Destinations(all + [destination])
    }
}
