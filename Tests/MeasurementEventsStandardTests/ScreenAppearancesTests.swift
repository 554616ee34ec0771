import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import XCTest

final class ScreenAppearancesTests: XCTestCase {
    private func makeAppearances() -> (ScreenAppearances, LockedValue<[ScreenView]>) {
        let posted = LockedValue<[ScreenView]>([])
        return (ScreenAppearances { view in posted.withLock { $0.append(view) } }, posted)
    }

    func testFirstAppearancePosts() {
        let (appearances, posted) = makeAppearances()
        XCTAssertTrue(appearances.appeared(id: 1, view: ScreenView("Feed", screenClass: "FeedView")))
        XCTAssertEqual(posted.withLock { $0 }, [ScreenView("Feed", screenClass: "FeedView")])
    }

    func testRepeatedAppearanceWhileVisibleDoesNotPost() {
        let (appearances, posted) = makeAppearances()
        appearances.appeared(id: 1, view: ScreenView("Feed"))
        XCTAssertFalse(appearances.appeared(id: 1, view: ScreenView("Feed")))
        XCTAssertEqual(posted.withLock { $0.count }, 1)
    }

    func testAppearanceAfterDisappearancePostsAgain() {
        let (appearances, posted) = makeAppearances()
        appearances.appeared(id: 1, view: ScreenView("Feed"))
        appearances.disappeared(id: 1)
        XCTAssertTrue(appearances.appeared(id: 1, view: ScreenView("Feed")))
        XCTAssertEqual(posted.withLock { $0.count }, 2)
    }

    func testTwoScreensOnDisplayBothPost() {
        let (appearances, posted) = makeAppearances()
        appearances.appeared(id: 1, view: ScreenView("List"))
        appearances.appeared(id: 2, view: ScreenView("Detail"))
        XCTAssertEqual(posted.withLock { $0.map(\.name) }, ["List", "Detail"])
    }

    func testEmptyNameIsNotPostedAndCounted() {
        let (appearances, posted) = makeAppearances()
        XCTAssertFalse(appearances.appeared(id: 1, view: ScreenView("")))
        XCTAssertEqual(posted.withLock { $0 }, [])
        XCTAssertEqual(appearances.ignoredEmptyNames, 1)
    }

    func testScreenViewPostsItsNameClassAndProperties() {
        let center = NotificationCenter()
        let recorded = LockedValue<[MeasurementEvent]>([])
        let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            if let event = try? MeasurementEvent(notification: note) { recorded.withLock { $0.append(event) } }
        }
        defer { center.removeObserver(observer) }
        ScreenView("Feed", screenClass: "FeedViewController", properties: ["tab": "home", "screen": "ignored"])
            .post(to: center)
        let received = recorded.withLock { $0 }
        XCTAssertEqual(received.map(\.name), ["screen/viewed"])
        XCTAssertEqual(received.first?.args, ["screen": "Feed", "screen_class": "FeedViewController", "tab": "home"])
    }
}
