import Foundation

/// A model of the original Objective-C aggregator, kept only as a reference: its allow-list
/// was an array literal returned by a method, so it was rebuilt for every event, matched by a
/// linear scan (wildcards by prefix), and kept events went to the tracker on the posting
/// thread.
final class ObjectiveCStyleAggregator: @unchecked Sendable {
    // @unchecked: `delivered` is written only by the observer block, which runs on the single
    // posting thread of the benchmark, and read by that thread after posting.
    private(set) var delivered = 0
    private var observer: (any NSObjectProtocol)?
    private let center: NotificationCenter
    private let keepsAllowList: Bool

    /// `keepsAllowList`: the fairer variant, whose array is built once and kept (as a
    /// `static let` would), instead of rebuilt for every event as the original did.
    init(center: NotificationCenter, keepsAllowList: Bool = false) {
        self.center = center
        self.keepsAllowList = keepsAllowList
        observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { [unowned self] note in
            self.receive(note)
        }
    }

    deinit {
        if let observer { center.removeObserver(observer) }
    }

    /// The same 10 names, 100 wildcards and the sample's name as the bus benchmarks' filter,
    /// the sample in the middle: a linear scan finds it after about half the list.
    private static let listedPatterns: [String] = {
        var patterns = AllowLists.patterns(names: 10, prefixes: 100).map(\.description)
        patterns.insert(SampleEvent.name.rawValue, at: patterns.count / 2)
        return patterns
    }()

    /// What the subclass's `-whiteList` returned: an array literal of constant strings, so a
    /// fresh array (one allocation, one retain per element) on every call.
    @inline(never)
    func allowList() -> [String] {
        var list: [String] = []
        list.reserveCapacity(Self.listedPatterns.count)
        list.append(contentsOf: Self.listedPatterns)
        return list
    }

    private func receive(_ note: Notification) {
        guard let info = note.userInfo, let name = info["name"] as? String else { return }
        let args = info["args"] as? [String: Any] ?? [:]
        let allowed = (keepsAllowList ? Self.listedPatterns : allowList()).contains { pattern in
            pattern.hasSuffix("*") ? name.hasPrefix(pattern.dropLast()) : pattern == name
        }
        guard allowed else { return }
        track(name, args)
    }

    @inline(never)
    private func track(_ name: String, _ args: [String: Any]) {
        delivered += 1
    }
}
