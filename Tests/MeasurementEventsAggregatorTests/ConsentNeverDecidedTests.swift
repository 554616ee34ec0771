import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// An app whose consent starts pending and never calls setConsent sends nothing: its first flush
/// (the app going to the background) says so once, in debug builds (issue 30).
final class ConsentNeverDecidedTests: XCTestCase {
    private func aggregator(
        consent: Consent, trackers: [any EventTracker] = [RecordingTracker()]
    ) -> (EventAggregator, LockedValue<[String]>) {
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.consent = consent
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(
            center: NotificationCenter(), filter: .allowAll, trackers: trackers, configuration: configuration)
        aggregator.start()
        return (aggregator, problems)
    }

    func testAPendingConsentNeverDecidedIsReportedOnceAtFlush() throws {
        #if !DEBUG
            throw XCTSkip("said in debug builds only")
        #else
            let (aggregator, problems) = aggregator(consent: .pendingHolding)
            aggregator.flush()
            aggregator.flush()
            let reported = problems.withLock { $0 }
            XCTAssertEqual(reported.count, 1, "\(reported)")
            XCTAssertTrue(reported.first?.contains("setConsent(_:) was never called") == true, "\(reported)")
            print("consent never decided: \(reported[0])")
        #endif
    }

    func testADecisionOrGrantedConsentOrNoTrackerSaysNothing() {
        let (decided, decidedProblems) = aggregator(consent: .pendingHolding)
        decided.setConsent(.pendingHolding)  // a decision, even to keep waiting
        decided.flush()
        XCTAssertEqual(decidedProblems.withLock { $0 }, [])
        let (granted, grantedProblems) = aggregator(consent: .granted)
        granted.flush()
        XCTAssertEqual(grantedProblems.withLock { $0 }, [])
        let (alone, aloneProblems) = aggregator(consent: .pendingDiscarding, trackers: [])
        alone.flush()
        XCTAssertEqual(aloneProblems.withLock { $0 }, [])
    }
}
