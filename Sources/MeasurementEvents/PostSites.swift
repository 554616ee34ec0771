import Foundation

/// Where events were posted (`#fileID` and `#line` of `MeasurementEvent.post` and the generated
/// helpers), carried to the aggregators that check a plan so that a violation names the line
/// that caused it.
///
/// A post pays one atomic load when no aggregator checks a plan: the site travels only to the
/// centers such an aggregator observes, beside the args (a reserved userInfo key, and the record
/// the post publishes), so that every observer sees exactly the posted args. Inside an aggregator
/// it rides in the event's args under the same key until the plan check takes it, before
/// anything else sees the event.
package enum PostSites {
    /// The reserved userInfo key (and, inside an aggregator, arg) that carries `File.swift:42`.
    package static let key = "_measurement_events_post_site"

    /// How many aggregators that record post sites are alive.
    package static let checkingAggregators = AtomicCounter()
    /// The centers they observe, with how many of them observe each.
    private static let centers = LockedValue<[ObjectIdentifier: Int]>([:])

    package static func register(_ center: NotificationCenter) {
        centers.withLock { $0[ObjectIdentifier(center), default: 0] += 1 }
        checkingAggregators.add(1)
    }

    package static func unregister(_ center: NotificationCenter) {
        checkingAggregators.add(-1)
        centers.withLock { centers in
            let id = ObjectIdentifier(center)
            let remaining = (centers[id] ?? 1) - 1
            centers[id] = remaining > 0 ? remaining : nil
        }
    }

    /// The site of a post, `File.swift:42`, when an aggregator checking a plan observes `center`.
    @inline(never)
    static func site(center: NotificationCenter, file: StaticString, line: UInt) -> String? {
        guard centers.withLock({ $0[ObjectIdentifier(center)] != nil }) else { return nil }
        return "\(file):\(line)"
    }

    /// Removes the site from `event`'s args; returns it.
    package static func take(from event: inout MeasurementEvent) -> (file: String, line: Int)? {
        guard let value = event.args.removeValue(forKey: key), case .string(let site) = value,
            let colon = site.lastIndex(of: ":"),
            let line = Int(site[site.index(after: colon)...])  // checked: parsing gives nil beyond Int
        else { return nil }
        return (String(site[..<colon]), line)
    }
}
