import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
internal import MeasurementEventsJSON

extension TrackingPlan {
    /// The event names the app's modules declare, for checking a plan's names at load time.
    ///
    /// From the generator's `plan --format json` output:
    ///
    /// ```swift
    /// let catalog = try TrackingPlan.Catalog(contentsOf: URL(fileURLWithPath: "Events/plan.json"))
    /// ```
    ///
    /// or from the name lists generated code exposes:
    ///
    /// ```swift
    /// let catalog = TrackingPlan.Catalog(names: DemoFeedEvents.allNames + DemoSettingsEvents.allNames)
    /// ```
    public struct Catalog: Sendable, Equatable {
        /// The declared event names.
        public private(set) var names: Set<EventName>

        /// A catalog of these names.
        ///
        /// - Parameter names: the declared event names.
        public init(names: some Sequence<EventName>) {
            self.names = Set(names)
        }

        /// Reads the generator's `plan --format json` output:
        /// `{"modules":[{"module":"DemoFeed","catalog":"…","events":[{"name":"feed/item_tapped",…}]}]}`.
        /// Only `modules[].events[].name` is used; other keys are left to the generator.
        ///
        /// - Parameters:
        ///   - data: the output of `measurement-events plan --format json`.
        ///   - file: the name used in messages.
        /// - Throws: ``TrackingPlanError`` when the data is not that output.
        public init(generatorOutput data: Data, file: String = "catalog") throws(TrackingPlanError) {
            var problems = ProblemList(file: file)
            var names: Set<EventName> = []
            let root = try PlanJSON.read(data, reportingTo: &problems)
            func requireArray(_ value: JSONNode?, _ path: String, at position: SourcePosition, _ what: String)
                -> [JSONNode]
            {
                guard let value else {
                    problems.add(path, at: position, "missing \(what), expected an array")
                    return []
                }
                guard case .array(let elements) = value.value else {
                    problems.add(path, at: value.position, "found \(value.kindDescription), expected an array")
                    return []
                }
                return elements
            }
            guard case .object(let rootMembers) = root.value else {
                problems.add(
                    "$", at: root.position, "found \(root.kindDescription), expected an object with \"modules\"")
                throw TrackingPlanError(problems: problems.sorted)
            }
            let modules = requireArray(
                rootMembers.first { $0.key == "modules" }?.value, "$.modules", at: root.position, "\"modules\"")
            for (moduleIndex, module) in modules.enumerated() {
                let modulePath = PlanText.path("$.modules", index: moduleIndex)
                guard case .object(let members) = module.value else {
                    problems.add(
                        modulePath, at: module.position,
                        "found \(module.kindDescription), expected an object with \"module\" and \"events\"")
                    continue
                }
                let events = requireArray(
                    members.first { $0.key == "events" }?.value, modulePath + ".events", at: module.position,
                    "\"events\"")
                for (eventIndex, event) in events.enumerated() {
                    let eventPath = PlanText.path(modulePath + ".events", index: eventIndex)
                    guard case .object(let eventMembers) = event.value else {
                        problems.add(
                            eventPath, at: event.position,
                            "found \(event.kindDescription), expected an object with \"name\"")
                        continue
                    }
                    guard let name = eventMembers.first(where: { $0.key == "name" })?.value else {
                        problems.add(eventPath, at: event.position, "missing \"name\", expected an event name string")
                        continue
                    }
                    guard case .string(let text) = name.value else {
                        problems.add(
                            eventPath + ".name", at: name.position,
                            "found \(name.kindDescription), expected an event name string")
                        continue
                    }
                    if let failure = EventName(text).validationFailure {
                        problems.add(
                            eventPath + ".name", at: name.position,
                            "found the invalid event name \(quotedInFull(text)): \(failure)")
                        continue
                    }
                    names.insert(EventName(text))
                }
            }
            if !problems.isEmpty { throw TrackingPlanError(problems: problems.sorted) }
            self.names = names
        }

        /// Reads the generator's `plan --format json` output from a file.
        ///
        /// - Parameter url: the file.
        /// - Throws: ``TrackingPlanError`` when the file cannot be read or is not that output.
        public init(contentsOf url: URL) throws(TrackingPlanError) {
            let data: Data
            do { data = try Data(contentsOf: url) } catch {
                throw TrackingPlanError(problems: [
                    TrackingPlanProblem(
                        file: url.path, path: "$", line: nil, column: nil,
                        message: "cannot read the file: \(error.localizedDescription)")
                ])
            }
            try self.init(generatorOutput: data, file: url.lastPathComponent)
        }

        /// This catalog's names and `other`'s.
        ///
        /// - Parameter other: another catalog.
        /// - Returns: the union of both.
        public func merging(_ other: Catalog) -> Catalog {
            Catalog(names: names.union(other.names))
        }

        /// Whether `name` is declared.
        ///
        /// - Parameter name: an event name.
        /// - Returns: `true` when a catalog declares it.
        public func declares(_ name: EventName) -> Bool {
            names.contains(name)
        }

        /// Whether any declared name matches `pattern`.
        ///
        /// - Parameter pattern: an allow- or deny-list pattern.
        /// - Returns: `true` when at least one declared name matches it.
        public func declaresAny(matching pattern: EventPattern) -> Bool {
            if case .exact(let name) = pattern.kind { return names.contains(EventName(name)) }
            return names.contains { pattern.matches($0) }
        }
    }
}
