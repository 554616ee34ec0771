import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class PersonalDataProcessorTests: XCTestCase {
    private let event = MeasurementEvent("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"])

    func testRemoveDropsPersonalArgsOnly() {
        let processed = PersonalDataProcessor(personalArgs: ["email"]).process(event)
        XCTAssertEqual(processed?.args, ["plan": "pro"])
    }

    func testHashReplacesValueBySaltedSHA256() {
        let processed = PersonalDataProcessor(personalArgs: ["email"], treatment: .hash(salt: "salt-1")).process(event)
        // sha256("salt-1" + "jane@example.com"), computed independently.
        XCTAssertEqual(
            processed?.args["email"],
            "sha256:41278b42cbc7630764121402901b1f51d4f61e23539fb20bdda56058f4ce108f")
        XCTAssertEqual(processed?.args["plan"], "pro")
    }

    func testPerEventPersonalArgsApplyOnlyToThatEvent() {
        let processor = PersonalDataProcessor(personalArgs: [], personalArgsByEvent: ["checkout/paid": ["plan"]])
        XCTAssertEqual(processor.process(event)?.args["plan"], "pro")
        XCTAssertNil(processor.process(MeasurementEvent("checkout/paid", args: ["plan": "pro"]))?.args["plan"])
    }
}

final class GlobalContextProcessorTests: XCTestCase {
    func testContextIsAddedWithoutOverridingEventArgs() {
        let processor = GlobalContextProcessor(["app_version": "4.2.0", "screen": "context"])
        let processed = processor.process(MeasurementEvent("feed/opened", args: ["screen": "feed"]))
        XCTAssertEqual(processed?.args, ["app_version": "4.2.0", "screen": "feed"])
    }
}

final class SamplingProcessorTests: XCTestCase {
    func testDecisionIsStablePerAnonymousIDAndName() {
        let sampling = SamplingProcessor(anonymousID: "install-1", rates: ["feed/*": 0.5])
        let first = sampling.keeps("feed/item_shown")
        for _ in 0..<10 {
            XCTAssertEqual(
                SamplingProcessor(anonymousID: "install-1", rates: ["feed/*": 0.5]).keeps("feed/item_shown"), first)
        }
    }

    func testRateIsRoughlyTheShareOfInstallsKept() {
        let kept = (0..<2_000).filter {
            SamplingProcessor(anonymousID: "install-\($0)", rates: ["feed/item_shown": 0.1]).keeps("feed/item_shown")
        }.count
        XCTAssertTrue((120...280).contains(kept), "kept \(kept) of 2000 at 10 %")
    }

    func testUnlistedNamesAreKeptAndZeroRateDropsAll() {
        let sampling = SamplingProcessor(anonymousID: "x", rates: ["noisy/*": 0, "noisy/important": 1])
        XCTAssertNotNil(sampling.process(MeasurementEvent("app/launched")))
        XCTAssertNil(sampling.process(MeasurementEvent("noisy/scroll")))
        XCTAssertNotNil(sampling.process(MeasurementEvent("noisy/important")))
    }

    func testSampledOutEventsAreCountedAsDiscardedByTheAggregator() {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["*"]),
            processors: [SamplingProcessor(anonymousID: "x", rates: ["noisy/*": 0])], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("noisy/scroll", to: center)
        MeasurementEvent.post("app/launched", to: center)
        XCTAssertEqual(aggregator.diagnostics.discarded, 1)
        XCTAssertEqual(aggregator.diagnostics.forwarded, 1)
    }
}
