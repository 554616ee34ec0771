import Foundation
import ImpressionTracking
import MeasurementEvents
import MeasurementEventsAggregator

/// Scrolls a simulated feed past the impression engine: a slow scroll, a fast fling, a pause,
/// a trip to background, and a final pause. Simulated time: runs in milliseconds.
func runImpressionsDemo() throws {
    let feed = SimulatedFeed(itemCount: 200, itemHeight: 160, viewportHeight: 800)
    print(
        """
        == Impressions: a feed of \(feed.itemCount) items of \(feed.itemHeight) pt in a \
        \(feed.viewportHeight) pt viewport, on a simulated clock ==
        an item counts after ≥50% of it stayed visible for 1 continuous second
        """)

    let center = NotificationCenter()
    let counted = LockedValue<[Int]>([])
    var aggregatorConfiguration = EventAggregator.Configuration.demo
    aggregatorConfiguration.delivery = .synchronous
    let aggregator = EventAggregator(
        center: center, filter: EventFilter(allow: ["impression/*"]),
        trackers: [
            ClosureTracker { event in
                if let id = event.args["item_id"]?.stringValue.flatMap(Int.init) { counted.withLock { $0.append(id) } }
            }
        ],
        configuration: aggregatorConfiguration)
    aggregator.start()

    let clock = ManualImpressionClock()
    let scheduler = ManualCycleScheduler()
    let tooShort = LockedValue<[Int]>([])
    let engine = try ImpressionEngine<Int>(
        center: center, clock: clock, scheduler: scheduler,
        discardHandler: { discard in
            if discard.reason == .tooShort { tooShort.withLock { $0.append(discard.itemID) } }
        })
    engine.startCycle()

    var sampler = VisibilitySampler(feed: feed, engine: engine, clock: clock, scheduler: scheduler)
    sampler.scroll("slow scroll", speed: 80, for: 12)
    sampler.scroll("fast fling (an item every 20 ms)", speed: 8_000, for: 2)
    sampler.scroll("pause", speed: 0, for: 3)
    sampler.scroll("quick scroll to new items", speed: 1_600, for: 0.5)
    sampler.scroll("pause", speed: 0, for: 0.3)
    sampler.background(for: 30)
    sampler.scroll("pause after returning", speed: 0, for: 0.5)
    sampler.scroll("fling", speed: 8_000, for: 0.5)
    sampler.scroll("pause", speed: 0, for: 2)
    sampler.leave()
    engine.runCycle()
    aggregator.flush()

    let diagnostics = engine.diagnostics
    let countedIDs = counted.withLock { $0 }
    let tooShortIDs = tooShort.withLock { $0 }
    print(
        """
        counted (\(countedIDs.count)): \(ranges(countedIDs))
        discarded as too short (\(tooShortIDs.count)): \(ranges(tooShortIDs))
        never 50% visible: \(diagnostics.discardedNeverViewable); impressions committed \(diagnostics.committed), \
        posted \(diagnostics.pushed) in \(diagnostics.batchesSent) batches; aggregator forwarded \
        \(aggregator.diagnostics.forwarded) impression events
        """)
}

/// The geometry of a plain vertical list.
private struct SimulatedFeed {
    let itemCount: Int
    let itemHeight: Double
    let viewportHeight: Double

    var maximumOffset: Double { Double(itemCount) * itemHeight - viewportHeight }

    /// The visible fraction of each item overlapping the viewport at `offset`.
    func visibleFractions(at offset: Double) -> [Int: Double] {
        let first = max(0, Int(offset / itemHeight))  // fits: the demo's own feed of 200 items
        let last = min(itemCount - 1, Int((offset + viewportHeight) / itemHeight))  // fits: as above
        var fractions: [Int: Double] = [:]
        for item in first...last {
            let top = Double(item) * itemHeight
            let overlap = min(top + itemHeight, offset + viewportHeight) - max(top, offset)
            if overlap > 0 { fractions[item] = overlap / itemHeight }
        }
        return fractions
    }
}

/// What a host's scroll-view sampler does each frame: report appearances, fraction changes
/// and disappearances; plus what the app does on backgrounding.
private struct VisibilitySampler {
    let feed: SimulatedFeed
    let engine: ImpressionEngine<Int>
    let clock: ManualImpressionClock
    let scheduler: ManualCycleScheduler
    var offset: Double = 0
    var onScreen: [Int: Double] = [:]
    var nextCycle: TimeInterval

    static let frame: TimeInterval = 0.01

    init(
        feed: SimulatedFeed, engine: ImpressionEngine<Int>, clock: ManualImpressionClock,
        scheduler: ManualCycleScheduler
    ) {
        self.feed = feed
        self.engine = engine
        self.clock = clock
        self.scheduler = scheduler
        nextCycle = clock.now() + engine.configuration.commitInterval
        sample()
    }

    mutating func scroll(_ label: String, speed: Double, for seconds: TimeInterval) {
        let before = engine.diagnostics
        let start = clock.now()
        let frames = Int((seconds / Self.frame).rounded())  // fits: the demo's scripted seconds
        for _ in 0..<frames {
            clock.advance(by: Self.frame)
            // Rounded to a micro-point, so that sums of frame steps land exactly on item edges.
            offset = min(((offset + speed * Self.frame) * 1e6).rounded() / 1e6, feed.maximumOffset)
            sample()
            if clock.now() >= nextCycle {
                scheduler.tick()
                nextCycle += engine.configuration.commitInterval
            }
        }
        let after = engine.diagnostics
        print(
            String(
                format: "%6.2f s  %@ items %3d–%3d on screen; too-short discards so far %3d",
                start, label.padding(toLength: 34, withPad: " ", startingAt: 0), onScreen.keys.min() ?? 0,
                onScreen.keys.max() ?? 0, after.discardedTooShort)
                + (after.committed > before.committed ? ", \(after.committed - before.committed) committed" : ""))
    }

    mutating func background(for seconds: TimeInterval) {
        print(
            String(
                format: "%6.2f s  background for %.0f s (running visits end now; commit and push)", clock.now(), seconds
            ))
        engine.enteredBackground()
        clock.advance(by: seconds)
        nextCycle = clock.now() + engine.configuration.commitInterval
        engine.becameActive()
    }

    mutating func leave() {
        for item in onScreen.keys { engine.disappeared(item) }
        onScreen = [:]
    }

    private mutating func sample() {
        let fractions = feed.visibleFractions(at: offset)
        for (item, fraction) in fractions {
            if let previous = onScreen[item] {
                if previous != fraction { engine.visibilityChanged(item, visibleFraction: fraction) }
            } else {
                engine.appeared(item, visibleFraction: fraction, context: ["position": item, "feed": "home"])
            }
        }
        for item in onScreen.keys where fractions[item] == nil { engine.disappeared(item) }
        onScreen = fractions
    }
}

/// `[1, 2, 3, 7, 9, 10]` → `"1–3, 7, 9–10"`.
private func ranges(_ ids: [Int]) -> String {
    var parts: [String] = []
    var run: (first: Int, last: Int)?
    for id in Set(ids).sorted() {
        if let current = run, id == current.last + 1 {
            run = (current.first, id)
            continue
        }
        if let current = run {
            parts.append(current.first == current.last ? "\(current.first)" : "\(current.first)–\(current.last)")
        }
        run = (id, id)
    }
    if let current = run {
        parts.append(current.first == current.last ? "\(current.first)" : "\(current.first)–\(current.last)")
    }
    return parts.isEmpty ? "none" : parts.joined(separator: ", ")
}
