import Foundation
import Testing

@testable import MeasurementEventsInspectorServer

@Suite struct InspectorStoreTests {
    func event(_ name: String, status: String = "forwarded") -> InspectedEvent {
        InspectedEvent(source: "app", name: name, module: InspectedEvent.module(of: name), status: status)
    }

    @Test func keepsTheNewestAndCountsTheEvicted() {
        let store = InspectorStore(capacity: 3)
        store.add((1...5).map { event("feed/item_\($0)") })
        #expect(store.events().map(\.name) == ["feed/item_3", "feed/item_4", "feed/item_5"])
        let counts = store.currentCounts
        #expect(counts.received == 5)
        #expect(counts.retained == 3)
        #expect(counts.evicted == 2)
        #expect(counts.cursor == 5)
        #expect(store.events(since: 4).map(\.seq) == [5])
    }

    @Test func filtersByNameAndStatus() {
        let store = InspectorStore(capacity: 10)
        store.add([event("a/x"), event("a/y", status: "filtered_out"), event("a/x", status: "filtered_out")])
        #expect(store.events(name: "a/x").count == 2)
        #expect(store.events(status: "filtered_out").map(\.name) == ["a/y", "a/x"])
        #expect(store.events(name: "a/x", status: "forwarded").count == 1)
        #expect(store.events(limit: 1).map(\.name) == ["a/x"])
        #expect(store.currentCounts.byStatus == ["forwarded": 1, "filtered_out": 2])
    }

    @Test func resetForgetsEventsButKeepsTheCursorGrowing() {
        let store = InspectorStore(capacity: 10)
        store.add([event("a/x"), event("a/y")])
        store.reset()
        #expect(store.events().isEmpty)
        #expect(store.currentCounts.received == 0)
        store.add([event("a/z")])
        #expect(store.events().map(\.seq) == [3])
    }
}
