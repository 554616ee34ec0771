import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsConsentSources

/// The IAB TCF source driven through a `UserDefaults` suite, as a consent platform writes to it.
///
/// On Linux, swift-corelibs-foundation posts `UserDefaults.didChangeNotification` only from
/// `setPersistentDomain(_:forName:)` and `removePersistentDomain(forName:)`, not from
/// `set(_:forKey:)`: tests that write key by key call `refresh()`, and the notification tests
/// replace the suite's content at once.
final class IABTCFConsentSourceTests: XCTestCase {
    private var suite: ConsentDefaults!
    private var recording: ConsentRecording!

    override func setUp() {
        super.setUp()
        suite = ConsentDefaults()
        recording = ConsentRecording()
    }

    override func tearDown() {
        suite.remove()
        super.tearDown()
    }

    private func makeSource(mapping: TCFPurposeMapping = .standard, vendorId: Int? = nil) -> IABTCFConsentSource {
        IABTCFConsentSource(
            defaults: suite.defaults, mapping: mapping, vendorId: vendorId, problemHandler: recording.problemHandler)
    }

    private let allPending: [ConsentPurpose: Consent] = [
        .analytics: .pendingHolding, .advertising: .pendingHolding, .personalization: .pendingHolding,
        .functional: .pendingHolding,
    ]
    private let allGranted: [ConsentPurpose: Consent] = [
        .analytics: .granted, .advertising: .granted, .personalization: .granted, .functional: .granted,
    ]

    func testStartDeliversTheCurrentStateAtOncePendingBeforeThePlatformDecides() {
        let source = makeSource()
        source.start(recording.update)
        XCTAssertEqual(recording.updates, [allPending])
        source.stop()
    }

    func testAPublishedTCStringWrittenToTheSuiteDrivesTheSource() {
        let source = makeSource()
        source.start(recording.update)
        suite.write(["IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.allPurposesConsented])
        source.refresh()
        XCTAssertEqual(recording.updates, [allPending, allGranted])

        // The user withdraws: the platform writes the range-encoded string (purposes 1, 3, 4).
        suite.write(["IABTCF_TCString": PublishedTCStrings.someConsentedRangeEncoded])
        source.refresh()
        XCTAssertEqual(
            recording.updates.last,
            [.analytics: .denied, .advertising: .denied, .personalization: .denied, .functional: .granted])
        XCTAssertEqual(recording.problems, [])
        source.stop()
    }

    func testGDPRAppliesZeroOneAndMissing() {
        let source = makeSource()
        source.start(recording.update)
        suite.write(["IABTCF_gdprApplies": 0, "IABTCF_PurposeConsents": "0000000000"])
        source.refresh()
        XCTAssertEqual(recording.updates.last, allGranted)

        suite.write(["IABTCF_gdprApplies": 1])
        source.refresh()
        XCTAssertEqual(
            recording.updates.last,
            [.analytics: .denied, .advertising: .denied, .personalization: .denied, .functional: .granted])

        suite.defaults.removeObject(forKey: "IABTCF_gdprApplies")
        source.refresh()
        XCTAssertEqual(recording.updates.last, allPending)
        XCTAssertEqual(recording.updates.count, 4)
        source.stop()
    }

    func testEachMalformedPurposesStringIsReportedOnceAndNothingTraps() {
        let source = makeSource()
        source.start(recording.update)
        suite.write(["IABTCF_gdprApplies": 1])
        for malformed in ["01x1", "", String(repeating: "1", count: 10_000)] {
            suite.write(["IABTCF_PurposeConsents": malformed])
            for _ in 0..<3 { source.refresh() }
        }
        XCTAssertEqual(recording.problems.count, 3)
        XCTAssertTrue(
            recording.problems[0].hasPrefix("IABTCF_PurposeConsents: found \"01x1\", with \"x\" at position 2"))
        XCTAssertTrue(recording.problems[1].hasPrefix("IABTCF_PurposeConsents: found an empty string"))
        XCTAssertTrue(recording.problems[2].hasPrefix("IABTCF_PurposeConsents: found a string of 10000 characters"))
        // Ignored: nothing else decides, so the purposes that need a TCF purpose stay pending.
        XCTAssertEqual(
            recording.updates,
            [
                allPending,
                [
                    .analytics: .pendingHolding, .advertising: .pendingHolding, .personalization: .pendingHolding,
                    .functional: .granted,
                ],
            ])
        // The same malformed value again later is the same problem: not reported again.
        suite.write(["IABTCF_PurposeConsents": "01x1"])
        source.refresh()
        XCTAssertEqual(recording.problems.count, 3)
        source.stop()
    }

    func testAMalformedTCStringIsReportedOnceWithTheFieldAndBit() {
        let source = makeSource()
        source.start(recording.update)
        suite.write([
            "IABTCF_gdprApplies": 1, "IABTCF_TCString": String(PublishedTCStrings.allPurposesConsented.prefix(60)),
        ])
        source.refresh()
        source.refresh()
        XCTAssertEqual(
            recording.problems,
            [
                "IABTCF_TCString: BitField of the vendor consent section at bit 230: found the end of the core segment "
                    + "at bit 360; expected 1283 bits, one per vendor up to MaxVendorId (consent string format v2, The "
                    + "Core String); the TC string is ignored"
            ])
        source.stop()
    }

    func testTheAppsMappingReplacesTheStandardOne() {
        let personalizedAds = ConsentPurpose(rawValue: "personalizedAds")
        let source = makeSource(mapping: TCFPurposeMapping([personalizedAds: [1, 3, 4], .analytics: [1, 8, 9, 10]]))
        source.start(recording.update)
        suite.write(["IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.someConsentedRangeEncoded])
        source.refresh()
        XCTAssertEqual(recording.updates.last, [personalizedAds: .granted, .analytics: .denied])
        source.stop()
    }

    func testAMappingThatCannotBeMetIsReportedOnceAtTheFirstRead() {
        let source = makeSource(mapping: TCFPurposeMapping([.analytics: [1, 30]]), vendorId: 70_000)
        source.start(recording.update)
        source.refresh()
        XCTAssertEqual(recording.problems.count, 2)
        XCTAssertTrue(recording.problems[0].hasPrefix("TCFPurposeMapping: analytics needs TCF purpose 30"))
        XCTAssertTrue(
            recording.problems[1].hasPrefix("IABTCFConsentSource: vendorId 70000 is no Global Vendor List id"))
        source.stop()
    }

    func testTheNamedVendorsConsentGatesThePurposes() {
        let source = makeSource(vendorId: 2)
        source.start(recording.update)
        suite.write(["IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.allPurposesConsented])
        source.refresh()
        XCTAssertEqual(
            recording.updates.last,
            [.analytics: .denied, .advertising: .denied, .personalization: .denied, .functional: .granted])
        source.stop()
    }

    func testEachAnnouncedChangeIsDeliveredOnceWithoutRefresh() {
        let source = makeSource()
        source.start(recording.update)
        suite.replaceAll(with: ["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "0000000000"])
        suite.replaceAll(with: ["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "0000000000"])
        suite.replaceAll(with: ["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "11111111111"])
        // A change elsewhere in the app's defaults is announced too, and changes nothing here.
        let other = ConsentDefaults()
        other.replaceAll(with: ["unrelated": 1])
        other.remove()
        XCTAssertEqual(
            recording.updates,
            [
                allPending,
                [.analytics: .denied, .advertising: .denied, .personalization: .denied, .functional: .granted],
                allGranted,
            ])
        source.stop()
    }

    func testStopEndsUpdatesAndStartingAgainDeliversTheCurrentState() {
        let source = makeSource()
        source.start(recording.update)
        source.stop()
        suite.replaceAll(with: ["IABTCF_gdprApplies": 0])
        source.refresh()
        XCTAssertEqual(recording.updates, [allPending])

        let second = ConsentRecording()
        source.start(second.update)
        XCTAssertEqual(second.updates, [allGranted])
        XCTAssertEqual(recording.updates, [allPending])
        source.stop()
    }

    func testStopFromInsideTheUpdateReturnsAtOnce() {
        let source = makeSource()
        let stopped = LockedValue(false)
        source.start { [source] _ in
            source.stop()
            stopped.withLock { $0 = true }
        }
        XCTAssertTrue(stopped.withLock { $0 })
        suite.replaceAll(with: ["IABTCF_gdprApplies": 0])
        XCTAssertTrue(stopped.withLock { $0 })
    }

    /// An update under way on another thread ends before stop() returns.
    func testStopWaitsForAnUpdateUnderWayOnAnotherThread() {
        let source = makeSource()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = LockedValue(false)
        let calls = LockedValue(0)
        source.start { _ in
            guard
                calls.withLock({
                    $0 += 1; return $0
                }) == 2
            else { return }
            entered.signal()
            _ = release.wait(timeout: .now() + 10)
            finished.withLock { $0 = true }
        }
        suite.write(["IABTCF_gdprApplies": 0])
        DispatchQueue.global().async { source.refresh() }
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { release.signal() }
        source.stop()
        XCTAssertTrue(finished.withLock { $0 })
    }

    /// A platform flipping a purpose 1,000 times while four threads refresh: updates arrive one at
    /// a time, never twice the same in a row, and the last one is the final state.
    func testConcurrentRefreshesDeliverEachChangeOnceAndEndOnTheFinalState() {
        let source = makeSource()
        let recording = self.recording!
        let inside = LockedValue(0)
        let overlaps = LockedValue(0)
        source.start { consents in
            if inside.withLock({
                $0 += 1; return $0
            }) > 1 {
                overlaps.withLock { $0 += 1 }
            }
            recording.update(consents)
            inside.withLock { $0 -= 1 }
        }
        suite.write(["IABTCF_gdprApplies": 1])
        // UserDefaults is thread-safe (Apple documents it so), but swift-corelibs-foundation does not
        // declare it Sendable.
        nonisolated(unsafe) let defaults = suite.defaults
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            for flip in 0..<1_000 {
                if worker == 0 {
                    defaults.set(flip % 2 == 0 ? "11111111111" : "0000000000", forKey: "IABTCF_PurposeConsents")
                }
                source.refresh()
            }
        }
        source.refresh()
        let updates = recording.updates
        XCTAssertEqual(overlaps.withLock { $0 }, 0)
        XCTAssertFalse(zip(updates, updates.dropFirst()).contains { $0 == $1 })
        XCTAssertEqual(updates.last?[.analytics], .denied)  // the last write, flip 999
        source.stop()
    }
}
