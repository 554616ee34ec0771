import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsConsentSources

/// The table from TCF purposes to ours, and what is wrong with one an app writes.
final class TCFPurposeMappingTests: XCTestCase {
    func testTheStandardTableAsDocumented() {
        let standard = TCFPurposeMapping.standard
        XCTAssertEqual(standard[.analytics], [1, 8, 9, 10])
        XCTAssertEqual(standard[.advertising], [1, 2, 7])
        XCTAssertEqual(standard[.personalization], [1, 3, 4, 5, 6])
        XCTAssertEqual(standard[.functional], [])
        XCTAssertEqual(standard.tcfPurposes.count, 4)
        XCTAssertEqual(standard.legitimateInterestPurposes, [])
        XCTAssertEqual(standard.problems, [])
    }

    func testAnAppReplacesARowAndAddsItsOwnPurpose() {
        var mapping = TCFPurposeMapping.standard
        mapping[.personalization] = [1, 5, 6]
        mapping[ConsentPurpose(rawValue: "crashReports")] = [1, 10]
        mapping[.advertising] = nil
        XCTAssertEqual(
            mapping.tcfPurposes,
            [.analytics: [1, 8, 9, 10], .personalization: [1, 5, 6], "crashReports": [1, 10], .functional: []])
    }

    func testPurposesOutsideTheTCStringsTwentyFourAreProblems() {
        let mapping = TCFPurposeMapping([.analytics: [0, 1, 25]])
        XCTAssertEqual(
            mapping.problems,
            [
                "TCFPurposeMapping: analytics needs TCF purpose 0, but TCF purposes are 1 to 24 (the 24 bits of "
                    + "PurposesConsent); analytics is denied wherever the GDPR applies",
                "TCFPurposeMapping: analytics needs TCF purpose 25, but TCF purposes are 1 to 24 (the 24 bits of "
                    + "PurposesConsent); analytics is denied wherever the GDPR applies",
            ])
    }

    func testLegitimateInterestCountsOnlyWhereTCFv22AllowsIt() {
        let mapping = TCFPurposeMapping([.analytics: [1, 8]], legitimateInterestPurposes: [1, 2, 3, 6, 7, 8, 11])
        XCTAssertEqual(mapping.problems.count, 3)
        XCTAssertTrue(
            mapping.problems[0].hasPrefix("TCFPurposeMapping: legitimate interest cannot stand for TCF purpose 1:"))
        XCTAssertEqual(
            (1...12).filter(mapping.acceptsLegitimateInterest(for:)), [2, 7, 8, 11])
    }
}
