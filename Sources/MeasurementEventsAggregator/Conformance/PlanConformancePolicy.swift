import MeasurementEvents

/// What an aggregator with registered catalogs does with events that break the plan, per
/// kind of violation, as Segment Protocols offers for its tracking plans: report (the
/// default), omit the arg at fault, or block the event.
///
/// ```swift
/// configuration.catalogs = [DemoFeedEvents.catalog, DemoSettingsEvents.catalog]
/// configuration.planConformance.actions[.unplannedArg] = .omitArg
/// configuration.planConformance.actions[.unplannedEvent] = .block
/// ```
public struct PlanConformancePolicy: Sendable, Hashable {
    /// What to do with an event that breaks one rule.
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// Deliver the event as posted; report and count the violation.
        case report
        /// Deliver the event without the arg at fault (reported and counted). For kinds not
        /// about an arg (unplanned or deprecated event, missing arg) it acts as ``report``.
        case omitArg
        /// Do not deliver the event (reported and counted, with the other violations).
        case block
    }

    /// Whether events are checked at all when catalogs are registered. On by default.
    public var isEnabled = true
    /// The action for each kind; kinds not listed are reported.
    public var actions: [PlanViolation.Kind: Action] = [:]
    /// Also send each violation to the trackers as a `plan/violation` event (like Segment's
    /// "Violation Generated"), with args `violated_event`, `kind`, `rule`, and `arg`,
    /// `value_type`, `file` and `line` when known. Off by default.
    public var forwardsViolationEvents = false
    /// Carry each post's `#fileID` and `#line` to this aggregator, so that violations name the
    /// line that posted (``PlanViolation/file``, ``PlanViolation/line``). On in debug builds:
    /// it costs each post on the aggregator's center a lock, a string and an arg more.
    public var recordsPostSites: Bool = {
        #if DEBUG
            return true
        #else
            return false
        #endif
    }()

    /// The name of the events ``forwardsViolationEvents`` sends; never checked against the plan.
    public static let violationEventName: EventName = "plan/violation"

    /// The default: every event checked, every violation reported, none blocked.
    public init() {}

    /// The action for `kind`.
    ///
    /// - Parameter kind: a kind of violation.
    /// - Returns: the configured action, ``Action/report`` when none is.
    public func action(for kind: PlanViolation.Kind) -> Action { actions[kind] ?? .report }
}
