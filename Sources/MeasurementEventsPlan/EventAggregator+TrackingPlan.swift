import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

extension EventAggregator {
    /// An aggregator configured by a tracking plan: its filter is the plan's, a processor
    /// applies the plan's labels, and each event reaches only its plan destinations among
    /// the named trackers.
    ///
    /// ```swift
    /// let plan = try TrackingPlan(contentsOf: planURL)
    /// let aggregator = try EventAggregator(
    ///     plan: plan, destinations: ["amplitude": AmplitudeTracker(), "console": ConsoleTracker()])
    /// aggregator.start()
    /// ```
    ///
    /// Subclasses inherit this initialiser when they declare none of their own:
    /// `try AppAggregator(plan: plan, destinations: …)`.
    ///
    /// - Parameters:
    ///   - plan: the validated tracking plan.
    ///   - destinations: one tracker per destination the plan declares (any names when it
    ///     declares none); it must not be empty.
    ///   - center: where events are observed; `.default` unless a test isolates it.
    ///   - processors: applied after the plan's labelling processor.
    ///   - configuration: delivery, consent, identity store, sessions and the other settings.
    /// - Throws: ``TrackingPlanError`` when the trackers do not match the plan's destinations.
    public convenience init(
        plan: TrackingPlan,
        destinations: [String: any EventTracker],
        center: NotificationCenter = .default,
        processors: [any EventProcessor] = [],
        configuration: Configuration = Configuration()
    ) throws(TrackingPlanError) {
        let parts = try plan.aggregatorParts(destinations: destinations)
        self.init(
            center: center, filter: parts.filter, trackers: parts.trackers,
            processors: parts.processors + processors, configuration: configuration)
    }

    /// The plan this aggregator was built from (the latest applied), if any.
    public var trackingPlan: TrackingPlan? {
        planHolder?.plan
    }

    /// Posts the plan's screen-view event on the aggregator's `center` if `screen` is in the
    /// plan; returns whether it posted. Does nothing for an aggregator not built from a plan.
    ///
    /// - Parameter screen: the screen's name as the app reports it.
    /// - Returns: whether an event was posted.
    @discardableResult
    public func reportScreenAppeared(_ screen: String) -> Bool {
        trackingPlan?.reportScreenAppeared(screen, to: center) ?? false
    }

    /// Replaces the plan of an aggregator built from one, all at once: filter, labels and
    /// routes. The plan must declare the same destinations as the first one (or none). On
    /// error nothing changes. Events already received are labelled and routed by the new plan;
    /// an event being delivered while the plan changes is labelled and routed by one plan,
    /// never by both.
    ///
    /// - Parameter plan: the new plan.
    /// - Throws: ``TrackingPlanError`` when its destinations differ from the first plan's.
    public func applyPlan(_ plan: TrackingPlan) throws(TrackingPlanError) {
        guard let holder = planHolder else {
            throw TrackingPlanError(problems: [
                TrackingPlanProblem(
                    file: plan.source, path: "$", line: nil, column: nil,
                    message:
                        "found an aggregator that was not built from a tracking plan, expected one made with init(plan:destinations:)"
                )
            ])
        }
        let names = trackers.compactMap { ($0 as? PlanDestinationTracker)?.destination }
        try plan.checkDestinations(names)
        // Between deliveries: labelling and routing both read the holder during a delivery.
        onDeliveryContext { holder.plan = plan }
        setFilter(plan.filter)
    }

    private var planHolder: TrackingPlanHolder? {
        trackers.lazy.compactMap { ($0 as? PlanDestinationTracker)?.holder }.first
    }
}

extension TrackingPlan {
    /// What an aggregator needs to follow a plan, for subclasses with their own initialiser:
    ///
    /// ```swift
    /// init(plan: TrackingPlan, destinations: [String: any EventTracker]) throws {
    ///     let parts = try plan.aggregatorParts(destinations: destinations)
    ///     super.init(filter: parts.filter, trackers: parts.trackers, processors: parts.processors)
    /// }
    /// ```
    public struct AggregatorParts: Sendable {
        /// The plan's allow- and deny-lists.
        public let filter: EventFilter
        /// One ``PlanDestinationTracker`` per destination, sorted by name.
        public let trackers: [any EventTracker]
        /// The labelling processor.
        public let processors: [any EventProcessor]
    }

    /// The filter, trackers and processors an aggregator built from this plan needs.
    ///
    /// - Parameter trackers: one tracker per destination the plan declares.
    /// - Returns: the parts to pass to `EventAggregator.init(center:filter:trackers:processors:configuration:)`.
    /// - Throws: ``TrackingPlanError`` when the trackers do not match the plan's destinations.
    public func aggregatorParts(destinations trackers: [String: any EventTracker]) throws(TrackingPlanError)
        -> AggregatorParts
    {
        try checkDestinations(Array(trackers.keys))
        let holder = TrackingPlanHolder(self)
        return AggregatorParts(
            filter: filter,
            trackers: trackers.sorted { $0.key < $1.key }.map {
                PlanDestinationTracker(destination: $0.key, tracker: $0.value, holder: holder)
            },
            processors: [PlanLabelProcessor(holder: holder)])
    }

    /// Checks that `names` (the trackers given) are exactly the declared destinations.
    func checkDestinations(_ names: [String]) throws(TrackingPlanError) {
        func problem(_ message: String) -> TrackingPlanProblem {
            TrackingPlanProblem(file: source, path: "$.destinations", line: nil, column: nil, message: message)
        }
        if names.isEmpty {
            throw TrackingPlanError(problems: [problem("found no destination trackers, expected at least one")])
        }
        guard !destinations.isEmpty else { return }
        var problems: [TrackingPlanProblem] = []
        for missing in destinations where !names.contains(missing) {
            problems.append(
                problem(
                    "found no tracker for the declared destination \(quotedInFull(missing)), expected one in the aggregator's destinations"
                ))
        }
        for extra in names.sorted() where !destinations.contains(extra) {
            problems.append(
                problem(
                    "found a tracker for \(quotedInFull(extra)), which the plan does not declare, expected one of \(PlanText.quotedList(destinations))"
                ))
        }
        if !problems.isEmpty { throw TrackingPlanError(problems: problems) }
    }
}
