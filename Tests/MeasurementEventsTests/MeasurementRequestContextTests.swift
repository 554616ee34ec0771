import Foundation
import MeasurementEvents
import XCTest

/// A request context: where it is current, what identity calls inside it change, and its limits.
final class MeasurementRequestContextTests: XCTestCase {
    func testNoContextIsCurrentOutsideRun() {
        XCTAssertNil(MeasurementRequestContext.current)
        let context = MeasurementRequestContext(userID: "user-1")
        XCTAssertNil(MeasurementRequestContext.current, "made but not run: not current")
        context.run { XCTAssertTrue(MeasurementRequestContext.current === context) }
        XCTAssertNil(MeasurementRequestContext.current)
    }

    /// The synchronous `run` on a thread with no task: what a thread-per-request server does.
    func testSynchronousRunIsCurrentInCodeItCallsOnItsThread() {
        let context = MeasurementRequestContext(userID: "user-1")
        let seen = LockedValue<[String?]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            context.run { seen.withLock { $0.append(Self.currentUserID()) } }
            seen.withLock { $0.append(Self.currentUserID()) }
            done.signal()
        }
        thread.start()
        done.wait()
        XCTAssertEqual(seen.withLock { $0 }, ["user-1", nil])
    }

    private static func currentUserID() -> String? { MeasurementRequestContext.current?.identity.userID }

    func testNestedRunsTheInnerOneWins() {
        let outer = MeasurementRequestContext(userID: "outer")
        let inner = MeasurementRequestContext(userID: "inner")
        outer.run {
            inner.run { XCTAssertEqual(Self.currentUserID(), "inner") }
            XCTAssertEqual(Self.currentUserID(), "outer")
        }
    }

    func testAsyncRunIsCurrentAcrossAwaitsAndInChildTasks() async {
        let context = MeasurementRequestContext(userID: "user-1")
        await context.run {
            await Task.yield()
            XCTAssertEqual(Self.currentUserID(), "user-1")
            async let child = Self.currentUserID()
            let fromChild = await child
            XCTAssertEqual(fromChild, "user-1")
            let grouped = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<4 { group.addTask { Self.currentUserID() } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(grouped, Array(repeating: "user-1", count: 4))
        }
        XCTAssertNil(MeasurementRequestContext.current)
    }

    func testIdentityCallsInsideChangeTheContextOnlyAndPostNothing() {
        let center = NotificationCenter()
        let posted = LockedValue(0)
        let observer = center.addObserver(forName: .measurementIdentity, object: nil, queue: nil) { _ in
            posted.withLock { $0 += 1 }
        }
        defer { center.removeObserver(observer) }
        let context = MeasurementRequestContext(userID: "user-1", anonymousID: "anon-1", traits: ["plan": "free"])
        context.run {
            MeasurementIdentity.identify(userID: nil, traits: ["plan": "pro"], to: center)
            MeasurementIdentity.group("acme", traits: ["seats": 3], to: center)
        }
        XCTAssertEqual(context.identity.userID, "user-1")
        XCTAssertEqual(context.identity.traits, ["plan": "pro"])
        XCTAssertEqual(context.identity.groupID, "acme")
        context.run { MeasurementIdentity.reset(to: center) }
        XCTAssertNil(context.identity.userID)
        XCTAssertNotEqual(context.identity.anonymousID, "anon-1", "a reset makes a new anonymous id")
        XCTAssertEqual(posted.withLock { $0 }, 0, "nothing posted from inside the context")
        MeasurementIdentity.reset(to: center)
        XCTAssertEqual(posted.withLock { $0 }, 1, "outside, identity calls are posted as before")
    }

    func testAContextWithoutAnAnonymousIDGetsAFreshOne() {
        let first = MeasurementRequestContext(userID: "user-1")
        let second = MeasurementRequestContext(userID: "user-1")
        XCTAssertFalse(first.identity.anonymousID.isEmpty)
        XCTAssertNotEqual(first.identity.anonymousID, second.identity.anonymousID)
    }

    // MARK: Limits

    func testTenThousandAttributesAreBoundedToTheFirstByNameAndReported() {
        let attributes = Dictionary(
            uniqueKeysWithValues: (0..<10_000).map {
                (String(format: "attr_%05d", $0), $0 as any EventValueConvertible)
            })
        let context = MeasurementRequestContext(userID: "user-1", attributes: attributes)
        XCTAssertEqual(context.attributes.count, MeasurementRequestContext.maximumAttributes)
        XCTAssertEqual(context.attributes["attr_00000"], .int(0))
        XCTAssertEqual(context.attributes["attr_00099"], .int(99))
        XCTAssertNil(context.attributes["attr_00100"])
        let trimmed = context.snapshot.takeTrimmed()
        XCTAssertEqual(
            trimmed?.findings,
            ["10000 attributes, expected at most 100: kept the first 100 by name, left out 9900"])
        XCTAssertNil(context.snapshot.takeTrimmed(), "reported once")
    }

    func testAOneMegabyteTraitIsLeftOutAndTheRestKept() {
        let large = String(repeating: "x", count: 1 << 20)
        let context = MeasurementRequestContext(userID: "user-1", traits: ["bio": large, "plan": "pro"])
        XCTAssertEqual(context.identity.traits, ["plan": "pro"])
        XCTAssertEqual(
            context.snapshot.takeTrimmed()?.description,
            "a request context was over its limits: trait \"bio\" has 1048576 bytes, expected at most 1024: left out")
    }

    func testAOneMegabyteTraitFromIdentifyInsideIsLeftOut() {
        let context = MeasurementRequestContext(userID: "user-1")
        XCTAssertNil(context.snapshot.takeTrimmed())
        context.run {
            MeasurementIdentity.identify(
                userID: nil, traits: ["bio": String(repeating: "x", count: 1 << 20), "plan": "pro"],
                to: NotificationCenter())
        }
        XCTAssertEqual(context.identity.traits, ["plan": "pro"])
        XCTAssertEqual(context.snapshot.takeTrimmed()?.findings.count, 1)
    }

    func testIDsTooLongAndValuesThatAreNoArgsAreLeftOut() {
        let long = String(repeating: "u", count: IdentityChange.maximumIDBytes + 1)
        let context = MeasurementRequestContext(
            userID: long, anonymousID: long, attributes: ["ratio": Double.nan, "tenant": "acme"])
        XCTAssertNil(context.identity.userID)
        XCTAssertNotEqual(context.identity.anonymousID, long)
        XCTAssertEqual(context.attributes, ["tenant": "acme"])
        let findings = context.snapshot.takeTrimmed()?.findings ?? []
        XCTAssertEqual(findings.count, 3, "\(findings)")
        XCTAssertTrue(findings.contains { $0.hasPrefix("user id has 1025 bytes") }, "\(findings)")
        XCTAssertTrue(findings.contains { $0.hasPrefix("attribute \"ratio\" is nan") }, "\(findings)")
    }

    func testWhatWasLeftOutBeforeAnIdentityCallIsStillReportedAfterIt() {
        let context = MeasurementRequestContext(
            userID: "user-1", attributes: ["note": String(repeating: "x", count: 2_000)])
        context.run { MeasurementIdentity.identify(userID: "user-2", to: NotificationCenter()) }
        XCTAssertEqual(context.snapshot.takeTrimmed()?.findings.count, 1)
        XCTAssertEqual(context.identity.userID, "user-2")
    }
}
